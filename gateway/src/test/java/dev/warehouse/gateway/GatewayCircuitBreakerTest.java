package dev.warehouse.gateway;

import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.detail;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.rpc.ErrorInfo;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.runtime.process.GrpcServer;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What counts against a backend's circuit breaker: only what is the backend's fault. A real gateway
 * in front of a fake order-service whose GetOrder takes as long as the test says.
 */
@Tag("integration")
class GatewayCircuitBreakerTest {

  private static final Duration DEFAULT_DEADLINE = Duration.ofMillis(300);
  private static final Duration MIN_BUDGET = Duration.ofMillis(100);

  /** An order-service whose GetOrder answers after {@code delayMs}, counting the calls it receives. */
  private static final class SlowOrders extends OrderServiceGrpc.OrderServiceImplBase {
    final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    final AtomicInteger received = new AtomicInteger();
    volatile long delayMs;

    @Override
    public void getOrder(GetOrderRequest request, StreamObserver<Order> observer) {
      received.incrementAndGet();
      timer.schedule(() -> {
        observer.onNext(Order.newBuilder().setOrderId(request.getOrderId()).build());
        observer.onCompleted();
      }, delayMs, TimeUnit.MILLISECONDS);
    }
  }

  /** Every outcome the breaker is told of, by kind. */
  private static final class Outcomes {
    final AtomicInteger successes = new AtomicInteger();
    final AtomicInteger errors = new AtomicInteger();
    final AtomicInteger ignored = new AtomicInteger();

    Outcomes(CircuitBreaker breaker) {
      breaker.getEventPublisher()
          .onSuccess(e -> successes.incrementAndGet())
          .onError(e -> errors.incrementAndGet())
          .onIgnoredError(e -> ignored.incrementAndGet());
    }

    int total() {
      return successes.get() + errors.get() + ignored.get();
    }
  }

  private static final GetOrderRequest GET = GetOrderRequest.newBuilder().setOrderId("O-1").build();

  private static final SlowOrders backend = new SlowOrders();
  private static GrpcServer backendServer;
  private GatewayProcess gateway;
  private ManagedChannel channel;
  private Outcomes outcomes;

  @BeforeAll
  static void startBackend() throws Exception {
    backendServer = new GrpcServer(NettyServerBuilder.forPort(0), List.of(backend), List.of(), Duration.ZERO,
        Duration.ofSeconds(1)).start();
  }

  @AfterAll
  static void stopBackend() {
    backendServer.stop();
    backend.timer.shutdownNow();
  }

  /** A fresh gateway per test, so every test starts with a closed circuit and an empty window. */
  @BeforeEach
  void startGateway() throws Exception {
    String address = "127.0.0.1:" + backendServer.port();
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of(address), List.of(address), DEFAULT_DEADLINE,
        MIN_BUDGET, Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(1)));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
    // One call first, so that the tests' deadlines are not spent connecting; then a clean slate.
    backend.delayMs = 0;
    stub().withDeadlineAfter(5, TimeUnit.SECONDS).getOrder(GET);
    orderCircuit().reset();
    outcomes = new Outcomes(orderCircuit());
    backend.received.set(0);
  }

  @AfterEach
  void stopGateway() {
    channel.shutdownNow();
    gateway.close();
  }

  private OrderServiceGrpc.OrderServiceBlockingStub stub() {
    return OrderServiceGrpc.newBlockingStub(channel);
  }

  private CircuitBreaker orderCircuit() {
    return gateway.circuitBreaker("order-service");
  }

  private static void await(BooleanSupplier condition, String what) {
    Awaitility.await(what).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
        .until(condition::getAsBoolean);
  }

  /** Impatient callers must not make the gateway refuse everyone else. */
  @Test
  void shortCallerDeadlines_doNotOpenTheCircuit_forTheNextCaller() {
    backend.delayMs = 30;
    for (int i = 0; i < 12; i++) {
      long deadlineMs = 2 + i % 7; // 2 to 8 ms: less than the backend needs
      StatusRuntimeException e = failure(() -> stub().withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS).getOrder(GET));
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    }

    assertThat(stub().getOrder(GET).getOrderId()).as("a normal call after the impatient ones").isEqualTo("O-1");
    assertThat(orderCircuit().getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(orderCircuit().getMetrics().getNumberOfFailedCalls()).isZero();
  }

  @Test
  void callWithLessThanTheMinimumBudget_failsAtOnce_withoutReachingTheBackendOrTheBreaker() {
    backend.delayMs = 0; // the backend would have answered in time: the gateway does not even try

    // Just under the minimum budget: refused all the same, and the refusal has most of the deadline to come back
    // (at half of it, a loaded machine can let the client's own timer fire first).
    StatusRuntimeException e = failure(() -> stub().withDeadlineAfter(MIN_BUDGET.toMillis() - 10, TimeUnit.MILLISECONDS)
        .getOrder(GET));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    ErrorInfo info = detail(e, ErrorInfo.class);
    assertThat(info.getReason()).isEqualTo("DEADLINE_TOO_SHORT");
    assertThat(info.getDomain()).isEqualTo("warehouse.dev");
    assertThat(info.getMetadataMap()).containsEntry("min_forward_budget_ms", Long.toString(MIN_BUDGET.toMillis()));
    assertThat(backend.received).hasValue(0);
    assertThat(outcomes.total()).as("outcomes told to the breaker").isZero();
    assertThat(orderCircuit().getMetrics().getNumberOfBufferedCalls()).isZero();
  }

  @Test
  void backendTooSlowForTheDefaultDeadline_opensTheCircuit() {
    backend.delayMs = 2_000;
    for (int i = 0; i < GatewayProcess.CIRCUIT_MIN_CALLS; i++) {
      assertThat(failure(() -> stub().getOrder(GET)).getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    }

    assertThat(orderCircuit().getState()).isEqualTo(CircuitBreaker.State.OPEN);
    assertStatus(() -> stub().getOrder(GET), Status.Code.UNAVAILABLE, "BACKEND_CIRCUIT_OPEN");
    assertThat(backend.received).hasValue(GatewayProcess.CIRCUIT_MIN_CALLS);
  }

  @Test
  void backendTooSlowForAFairCallerDeadline_opensTheCircuit() throws Exception {
    backend.delayMs = 2_000;
    long fair = 3 * MIN_BUDGET.toMillis();
    for (int i = 0; i < 3 * GatewayProcess.CIRCUIT_WINDOW && orderCircuit().getState() == CircuitBreaker.State.CLOSED; i++) {
      assertThat(failure(() -> stub().withDeadlineAfter(fair, TimeUnit.MILLISECONDS).getOrder(GET)).getStatus().getCode())
          .isIn(Status.Code.DEADLINE_EXCEEDED, Status.Code.UNAVAILABLE);
    }

    await(() -> orderCircuit().getState() == CircuitBreaker.State.OPEN, "the circuit to open");
    assertThat(outcomes.successes).as("timeouts recorded as successes").hasValue(0);
    assertStatus(() -> stub().getOrder(GET), Status.Code.UNAVAILABLE, "BACKEND_CIRCUIT_OPEN");
  }

  @Test
  void callerCancellations_areIgnoredByTheBreaker() throws Exception {
    backend.delayMs = 2_000;
    int calls = GatewayProcess.CIRCUIT_WINDOW;
    for (int i = 0; i < calls; i++) {
      int before = backend.received.get();
      ListenableFuture<Order> call = OrderServiceGrpc.newFutureStub(channel).getOrder(GET);
      await(() -> backend.received.get() > before, "the backend to receive call " + i);
      call.cancel(true);
    }

    await(() -> outcomes.total() == calls, "the breaker to hear of every call");
    assertThat(outcomes.ignored).as("ignored").hasValue(calls);
    assertThat(orderCircuit().getMetrics().getNumberOfBufferedCalls()).isZero();
    assertThat(orderCircuit().getState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }
}
