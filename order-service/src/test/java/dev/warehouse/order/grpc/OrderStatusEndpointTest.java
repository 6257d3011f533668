package dev.warehouse.order.grpc;

import static dev.warehouse.testing.Statuses.assertInvalid;
import static dev.warehouse.testing.Statuses.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.type.Money;
import dev.warehouse.order.domain.InMemoryOrders;
import dev.warehouse.order.domain.OrderService;
import dev.warehouse.order.domain.SagaTimings;
import dev.warehouse.order.domain.ScriptedStock;
import dev.warehouse.order.domain.StockReservations.State;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.testing.TestClock;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/**
 * UpdateOrderStatus through its endpoint, on the in-memory orders and the inventory's rules in memory: valid
 * transitions only, conditioned on the version, a repeated change answered as it stands, and the stock step
 * each change owes. That the DynamoDB store writes the order's two copies together, conditioned on the version,
 * is its contract suite's (simulation's OrderRepositoryContract), run on moto and on the memory store alike.
 */
class OrderStatusEndpointTest {

  private final TestClock clock = new TestClock(Instant.parse("2026-07-26T09:00:00Z"));
  private final InMemoryOrders orders = new InMemoryOrders();
  private final ScriptedStock stock = new ScriptedStock();
  private final OrderGrpcEndpoint endpoint = new OrderGrpcEndpoint(new OrderService(orders, stock, clock,
      wait -> new CompletableFuture<>(), new SagaTimings(Duration.ofSeconds(30), Duration.ofSeconds(60),
      Duration.ofSeconds(1)), new SimpleMeterRegistry()));
  private final AtomicInteger ids = new AtomicInteger();

  /** One unary call, answered before it returns (everything below it is in memory); its error is thrown. */
  private static <Q, R> R call(BiConsumer<Q, StreamObserver<R>> method, Q request) {
    CompletableFuture<R> answer = new CompletableFuture<>();
    method.accept(request, new StreamObserver<>() {
      @Override
      public void onNext(R value) {
        answer.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        answer.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    });
    assertThat(answer).as("answered at once").isDone();
    try {
      return answer.join();
    } catch (java.util.concurrent.CompletionException e) {
      throw (StatusRuntimeException) e.getCause();
    }
  }

  private String place(String customerId) {
    int n = ids.incrementAndGet();
    return call(endpoint::placeOrder, PlaceOrderRequest.newBuilder().setCustomerId(customerId).setOrderId("O-" + n)
        .setOrderDate("2026-07-26").setRequestId("req-" + n)
        .addLines(OrderLine.newBuilder().setProductId("P-1").setWarehouseId("W-1").setQuantity(1)
            .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(42).setNanos(500_000_000)))
        .build()).getOrderId();
  }

  private Order move(String orderId, OrderStatus status, long expectedVersion) {
    return call(endpoint::updateOrderStatus, UpdateOrderStatusRequest.newBuilder()
        .setOrderId(orderId).setStatus(status).setExpectedVersion(expectedVersion).build());
  }

  /** The order as GetOrder reads it. */
  private Order stored(String orderId) {
    return call(endpoint::getOrder, GetOrderRequest.newBuilder().setOrderId(orderId).setConsistentRead(true).build());
  }

  @Test
  void walksTheLifeCycle_andCommitsTheStockWhenItShips() {
    String orderId = place("C-1");
    assertThat(stock.states.get(orderId)).isEqualTo(State.CONFIRMED);
    assertThat(move(orderId, OrderStatus.ORDER_STATUS_PAID, 1).getVersion()).isEqualTo(2);
    assertThat(move(orderId, OrderStatus.ORDER_STATUS_SHIPPED, 0).getVersion()).isEqualTo(3);
    assertThat(stock.states.get(orderId)).as("shipping takes the stock").isEqualTo(State.COMMITTED);
    Order delivered = move(orderId, OrderStatus.ORDER_STATUS_DELIVERED, 3);
    assertThat(delivered.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_DELIVERED);
    assertThat(stored(orderId)).isEqualTo(delivered);
    assertThat(orders.owing()).as("no step left owed").isEmpty();
  }

  @Test
  void cancelsFromPlacedOrPaid_only_givingTheStockBack() {
    String placed = place("C-1");
    assertThat(move(placed, OrderStatus.ORDER_STATUS_CANCELLED, 0).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_CANCELLED);
    assertThat(stock.states.get(placed)).isEqualTo(State.RELEASED);
    String paid = place("C-1");
    move(paid, OrderStatus.ORDER_STATUS_PAID, 0);
    assertThat(move(paid, OrderStatus.ORDER_STATUS_CANCELLED, 0).getVersion()).isEqualTo(3);
    String shipped = place("C-1");
    move(shipped, OrderStatus.ORDER_STATUS_PAID, 0);
    move(shipped, OrderStatus.ORDER_STATUS_SHIPPED, 0);
    assertStatus(() -> move(shipped, OrderStatus.ORDER_STATUS_CANCELLED, 0),
        Status.Code.FAILED_PRECONDITION, "INVALID_STATUS_TRANSITION");
    assertThat(stock.states.get(shipped)).isEqualTo(State.COMMITTED);
  }

  @Test
  void refusesAnInvalidTransition_andWritesNothing() {
    String orderId = place("C-1");
    assertStatus(() -> move(orderId, OrderStatus.ORDER_STATUS_SHIPPED, 0),
        Status.Code.FAILED_PRECONDITION, "INVALID_STATUS_TRANSITION");
    assertStatus(() -> move(orderId, OrderStatus.ORDER_STATUS_DELIVERED, 0),
        Status.Code.FAILED_PRECONDITION, "INVALID_STATUS_TRANSITION");
    Order unchanged = stored(orderId);
    assertThat(unchanged.getVersion()).isEqualTo(1);
    assertThat(unchanged.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
    assertThat(stock.calls).as("the inventory asked for nothing past the placing")
        .containsExactly("reserve " + orderId, "confirm " + orderId);
  }

  @Test
  void isAborted_whenExpectedVersionIsStale() {
    String orderId = place("C-1");
    move(orderId, OrderStatus.ORDER_STATUS_PAID, 1);
    assertStatus(() -> move(orderId, OrderStatus.ORDER_STATUS_SHIPPED, 1), Status.Code.ABORTED, "VERSION_MISMATCH");
    assertThat(stored(orderId).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PAID);
  }

  @Test
  void aChangeThatAlreadyHappened_answersTheOrderAsItIs_whateverVersionItExpected() {
    String orderId = place("C-1");
    assertThat(move(orderId, OrderStatus.ORDER_STATUS_PLACED, 0).getVersion()).as("placed already: nothing written")
        .isEqualTo(1);
    Order paid = move(orderId, OrderStatus.ORDER_STATUS_PAID, 1);
    // The caller's retry of the same change, its answer lost: the version it expected has moved on.
    Order again = move(orderId, OrderStatus.ORDER_STATUS_PAID, 1);
    assertThat(again.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PAID);
    assertThat(again.getVersion()).isEqualTo(paid.getVersion()).isEqualTo(2);
    assertThat(stored(orderId).getVersion()).isEqualTo(2);
  }

  @Test
  void isNotFound_forAnUnknownOrder() {
    assertStatus(() -> move("O-unknown", OrderStatus.ORDER_STATUS_PAID, 0), Status.Code.NOT_FOUND, "ORDER_NOT_FOUND");
  }

  @Test
  void refusesAMalformedRequest_beforeReadingAnything() {
    assertInvalid(() -> move("", OrderStatus.ORDER_STATUS_PAID, 0), "order_id");
    assertInvalid(() -> move("O-1", OrderStatus.ORDER_STATUS_UNSPECIFIED, 0), "status");
    assertThat(stock.calls).isEmpty();
  }
}
