package dev.warehouse.gateway;

import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.detail;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.ListCustomerOrdersResponse;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.runtime.process.GrpcServer;
import dev.warehouse.testing.MetricsScrape;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The gateway's concurrency limit per backend, on a tiny fixed limit of 2, in front of a fake
 * order-service: GetOrder waits until the test lets it answer, ListCustomerOrders answers at once, and
 * UpdateOrderStatus refuses as a busy service does (RESOURCE_EXHAUSTED, OVERLOADED). The excess of one
 * route is refused by the gateway itself, never reaching the backend; another route keeps its share;
 * health is answered; and a busy backend's refusals never open the circuit, which is for failing ones.
 */
@Tag("integration")
class GatewayAdmissionTest {

  /** An order-service whose GetOrder waits for {@link #gate}, counting what reaches it. */
  private static final class HeldOrders extends OrderServiceGrpc.OrderServiceImplBase {
    final AtomicInteger gets = new AtomicInteger();
    volatile CountDownLatch gate = new CountDownLatch(0);

    @Override
    public void getOrder(GetOrderRequest request, StreamObserver<Order> observer) {
      gets.incrementAndGet();
      CountDownLatch waitFor = gate;
      CompletableFuture.runAsync(() -> {
        try {
          waitFor.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        observer.onNext(Order.newBuilder().setOrderId(request.getOrderId()).build());
        observer.onCompleted();
      });
    }

    @Override
    public void listCustomerOrders(ListCustomerOrdersRequest request, StreamObserver<ListCustomerOrdersResponse> observer) {
      observer.onNext(ListCustomerOrdersResponse.getDefaultInstance());
      observer.onCompleted();
    }

    @Override
    public void updateOrderStatus(UpdateOrderStatusRequest request, StreamObserver<Order> observer) {
      observer.onError(StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
          .setCode(Code.RESOURCE_EXHAUSTED_VALUE).setMessage("busy")
          .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("OVERLOADED").setDomain("warehouse.dev").build()))
          .build()));
    }
  }

  private final HeldOrders backend = new HeldOrders();
  private GrpcServer backendServer;
  private GatewayProcess gateway;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    backendServer = new GrpcServer(NettyServerBuilder.forPort(0), List.of(backend), List.of(), Duration.ZERO,
        Duration.ofSeconds(1)).start();
    String address = "127.0.0.1:" + backendServer.port();
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of(address), List.of(address), Duration.ofSeconds(10),
        Duration.ofMillis(50), Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(1))
        .withAdmission(AdmissionConfig.fixed(2).withMaxWait(Duration.ofSeconds(10))));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
  }

  @AfterEach
  void stop() {
    backend.gate.countDown();
    channel.shutdownNow();
    gateway.close();
    backendServer.stop();
  }

  private OrderServiceGrpc.OrderServiceBlockingStub stub() {
    return OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static GetOrderRequest get(int i) {
    return GetOrderRequest.newBuilder().setOrderId("O-" + i).build();
  }

  /** Two GetOrders holding the gateway's two slots, each waiting at the backend. */
  private List<CompletableFuture<Order>> holdBoth() {
    backend.gate = new CountDownLatch(1);
    List<CompletableFuture<Order>> held = IntStream.range(0, 2)
        .mapToObj(i -> CompletableFuture.supplyAsync(() -> stub().getOrder(get(i)))).toList();
    // Both calls reached the backend, so both hold the gateway's slots; bounded, so a lost call fails the test
    // instead of hanging the build.
    Awaitility.await("both calls held at the backend").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
        .until(() -> backend.gets.get() >= 2);
    return held;
  }

  @Test
  void overTheLimit_aCallWaitsAtTheGateway_andIsForwardedWhenASlotIsGivenBack() throws Exception {
    List<CompletableFuture<Order>> held = holdBoth();
    CompletableFuture<Order> third = CompletableFuture.supplyAsync(() -> stub().getOrder(get(3)));
    Awaitility.await("the third call waiting for a slot").atMost(Duration.ofSeconds(30))
        .until(() -> MetricsScrape.scrape(gateway.metricsPort()),
            metrics -> metrics.matches("(?s).*admission_waiting\\{[^}]*route=\"GetOrder\"[^}]*\\} 1\\.0.*"));
    assertThat(backend.gets.get()).as("the waiting call has not reached the backend").isEqualTo(2);

    backend.gate.countDown();
    assertThat(third.get(10, TimeUnit.SECONDS).getOrderId()).as("forwarded, not refused").isEqualTo("O-3");
    assertThat(held).allSatisfy(call -> assertThat(call.get(10, TimeUnit.SECONDS).getOrderId()).startsWith("O-"));
  }

  @Test
  void overTheLimit_theGatewayRefusesACallThatWaitedHalfItsTime_whileAnotherRouteAndHealthAreServed() throws Exception {
    List<CompletableFuture<Order>> held = holdBoth();

    // A caller with 2 s waits 1 s for a slot, then is refused.
    StatusRuntimeException refused = failure(() -> OrderServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(2, TimeUnit.SECONDS).getOrder(get(3)));
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    ErrorInfo info = detail(refused, ErrorInfo.class);
    assertThat(info.getReason()).isEqualTo("OVERLOADED");
    assertThat(info.getMetadataMap()).containsEntry("service", "warehouse.order.v1.OrderService")
        .containsEntry("route", "GetOrder");
    assertThat(detail(refused, RetryInfo.class).getRetryDelay().getNanos()).isEqualTo(100_000_000);
    assertThat(backend.gets.get()).as("the refused call never reached the backend").isEqualTo(2);

    assertThat(stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId("C-1").build()))
        .isEqualTo(ListCustomerOrdersResponse.getDefaultInstance());
    assertThat(HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);

    backend.gate.countDown();
    assertThat(held).allSatisfy(call -> assertThat(call.get(10, TimeUnit.SECONDS).getOrderId()).startsWith("O-"));
    assertThat(stub().getOrder(get(4)).getOrderId()).isEqualTo("O-4");
  }

  @Test
  void aBusyBackendsRefusals_reachTheCaller_andNeverOpenTheCircuit() {
    CircuitBreaker circuit = gateway.circuitBreaker(GatewayProcess.ORDER_SERVICE);
    for (int i = 0; i < 50; i++) {
      String orderId = "O-" + i;
      assertStatus(() -> stub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder().setOrderId(orderId)
          .setStatus(OrderStatus.ORDER_STATUS_PAID).build()), Status.Code.RESOURCE_EXHAUSTED, "OVERLOADED");
    }
    assertThat(circuit.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(circuit.getMetrics().getNumberOfFailedCalls()).isZero();
    // Their slots came back: the limit of 2 still admits calls.
    assertThat(stub().getOrder(get(1)).getOrderId()).isEqualTo("O-1");
  }
}
