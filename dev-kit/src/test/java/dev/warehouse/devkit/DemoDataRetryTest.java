package dev.warehouse.devkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The demo loader against a gateway that answers "not now" first: a real server on loopback whose every
 * RPC refuses its first calls (RESOURCE_EXHAUSTED with a RetryInfo, UNAVAILABLE without one) before it
 * serves. The waits are recorded, not slept.
 */
class DemoDataRetryTest {

  private static final Duration HINT = Duration.ofMillis(170);

  private final List<Duration> waits = new ArrayList<>();
  private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
  private final RetryingCalls retrying = new RetryingCalls(waits::add, new PrintStream(printed, true, StandardCharsets.UTF_8));
  private Server server;
  private ManagedChannel channel;

  /** Refuses the first {@code refusals} calls of each RPC, then serves from a map. */
  private void start(int refusals, Status.Code refusedWith) throws Exception {
    Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    Map<String, Object> stored = new ConcurrentHashMap<>();
    Refusing refuse = (rpc, observer) -> {
      if (calls.computeIfAbsent(rpc, k -> new AtomicInteger()).incrementAndGet() > refusals) {
        return false;
      }
      observer.onError(notNow(refusedWith));
      return true;
    };
    InventoryServiceGrpc.InventoryServiceImplBase inventory = new InventoryServiceGrpc.InventoryServiceImplBase() {
      @Override
      public void getSerialItem(GetSerialItemRequest request, StreamObserver<SerialItem> answer) {
        if (!refuse.refused("GetSerialItem", answer)) {
          found(answer, (SerialItem) stored.get("serial/" + request.getSerialNumber()));
        }
      }

      @Override
      public void putSerialItem(PutSerialItemRequest request, StreamObserver<SerialItem> answer) {
        if (!refuse.refused("PutSerialItem", answer)) {
          stored.put("serial/" + request.getItem().getSerialNumber(), request.getItem());
          found(answer, request.getItem());
        }
      }

      @Override
      public void getProductInventory(GetProductInventoryRequest request, StreamObserver<ProductInventory> answer) {
        if (!refuse.refused("GetProductInventory", answer)) {
          found(answer, (ProductInventory) stored.get("stock/" + request.getWarehouseId()));
        }
      }

      @Override
      public void putProductInventory(PutProductInventoryRequest request, StreamObserver<ProductInventory> answer) {
        if (!refuse.refused("PutProductInventory", answer)) {
          stored.put("stock/" + request.getInventory().getWarehouseId(), request.getInventory());
          found(answer, request.getInventory());
        }
      }
    };
    OrderServiceGrpc.OrderServiceImplBase orders = new OrderServiceGrpc.OrderServiceImplBase() {
      @Override
      public void getOrder(GetOrderRequest request, StreamObserver<Order> answer) {
        if (!refuse.refused("GetOrder", answer)) {
          found(answer, (Order) stored.get("order/" + request.getOrderId()));
        }
      }

      @Override
      public void placeOrder(PlaceOrderRequest request, StreamObserver<Order> answer) {
        if (!refuse.refused("PlaceOrder", answer)) {
          Order order = Order.newBuilder().setOrderId(request.getOrderId()).setCustomerId(request.getCustomerId()).build();
          stored.put("order/" + request.getOrderId(), order);
          found(answer, order);
        }
      }
    };
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(inventory).addService(orders).build().start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
  }

  private interface Refusing {
    boolean refused(String rpc, StreamObserver<?> observer);
  }

  private static <T> void found(StreamObserver<T> answer, T value) {
    if (value == null) {
      answer.onError(Status.NOT_FOUND.asRuntimeException());
      return;
    }
    answer.onNext(value);
    answer.onCompleted();
  }

  private static StatusRuntimeException notNow(Status.Code code) {
    com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder().setCode(code.value()).setMessage("not now");
    if (code == Status.Code.RESOURCE_EXHAUSTED) {
      status.addDetails(Any.pack(RetryInfo.newBuilder()
          .setRetryDelay(com.google.protobuf.Duration.newBuilder().setNanos((int) HINT.toNanos())).build()));
    }
    return StatusProto.toStatusRuntimeException(status.build());
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void refusalsWithARetryHint_areAskedAgainAfterTheHintedDelay_andEverythingLoads() throws Exception {
    start(2, Status.Code.RESOURCE_EXHAUSTED);
    assertThat(DemoData.load(channel, retrying)).isEqualTo(7);
    assertThat(waits).isNotEmpty().allMatch(HINT::equals);
    assertThat(printed.toString(StandardCharsets.UTF_8)).contains("PlaceOrder answered RESOURCE_EXHAUSTED");
    assertThat(DemoData.load(channel, retrying)).as("loading again writes nothing").isZero();
  }

  @Test
  void unavailableWithoutAHint_backsOffDoubling() throws Exception {
    start(3, Status.Code.UNAVAILABLE);
    assertThat(DemoData.load(channel, retrying)).isEqualTo(7);
    assertThat(waits.subList(0, 3)).containsExactly(RetryingCalls.FIRST_BACKOFF, RetryingCalls.FIRST_BACKOFF.multipliedBy(2),
        RetryingCalls.FIRST_BACKOFF.multipliedBy(4));
  }

  @Test
  void aRefusalThatOutlastsTheAttempts_isReportedWithItsStatus() throws Exception {
    start(RetryingCalls.MAX_ATTEMPTS, Status.Code.RESOURCE_EXHAUSTED);
    assertThatThrownBy(() -> DemoData.load(channel, retrying)).isInstanceOfSatisfying(StatusRuntimeException.class,
        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
    assertThat(waits).hasSize(RetryingCalls.MAX_ATTEMPTS - 1);
  }

  @Test
  void anAnswerAboutTheRequest_isNotAskedAgain() throws Exception {
    start(1, Status.Code.PERMISSION_DENIED);
    assertThatThrownBy(() -> DemoData.load(channel, retrying)).isInstanceOfSatisfying(StatusRuntimeException.class,
        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    assertThat(waits).isEmpty();
  }
}
