package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.eur;
import static dev.warehouse.order.OrderFixture.id;
import static dev.warehouse.order.OrderFixture.line;
import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.detail;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.PreconditionFailure;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.ReservationState;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.testing.DynamoFaultProxy.Fault;
import dev.warehouse.testing.Eventually;
import dev.warehouse.runtime.testing.StrictMoto;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Orders buy stock: PlaceOrder holds its lines at a real inventory-service before it answers PLACED,
 * refuses what is short, and every later step (cancel, ship) and every interrupted placing moves the
 * stock exactly once. On the strict launcher, with injected TransactionConflicts and eventually
 * consistent reads, and with the recovery looking every 250 ms for steps owed longer than 2 s.
 */
@Tag("integration")
class OrderStockTest {

  private static final Duration GRACE = Duration.ofSeconds(2); // longer than a cut-off call's 1.5 s deadline
  private static final Duration RECOVERY = Duration.ofMillis(250);

  private static OrderFixture orders;

  @BeforeAll
  static void start() throws Exception {
    orders = new OrderFixture(OrderFixture.CALL_TIMEOUT, settings -> settings.withRecovery(GRACE, RECOVERY));
    StrictMoto.table(orders.table).conflictRate(0.2).apply();
  }

  @AfterEach
  void clearFaults() {
    orders.proxy.clear();
    orders.inventoryProxy.clear();
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      assertThat(orders.audit().findings()).as("orders whose copies disagree").isEmpty();
    } finally {
      StrictMoto.reset(orders.table);
      orders.close();
    }
  }

  private static PlaceOrderRequest buy(String product, String warehouse, long quantity) {
    return PlaceOrderRequest.newBuilder().setCustomerId(id("C")).setRequestId(id("req"))
        .addLines(line(product, warehouse, quantity, eur(10, 0))).build();
  }

  private static Order get(String orderId) {
    return orders.stub().getOrder(GetOrderRequest.newBuilder().setOrderId(orderId).setConsistentRead(true).build());
  }

  /** Moves an order as a careful client does: a repeated move to the status it has answers the order. */
  private static Order move(String orderId, OrderStatus status) {
    return untilDecided(() -> orders.stub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder().setOrderId(orderId)
        .setStatus(status).build()));
  }

  /**
   * Places {@code request} as a careful client does: an answer that leaves the outcome open (ABORTED after
   * the conflicts outlasted the retries, UNAVAILABLE, DEADLINE_EXCEEDED) is asked again with the same
   * request_id, which answers the first call's outcome or finishes it.
   */
  private static Order placeUntilDecided(PlaceOrderRequest request) {
    return untilDecided(() -> orders.stub().withDeadlineAfter(60, TimeUnit.SECONDS).placeOrder(request));
  }

  /** Asks again while the answer leaves the outcome open: the table injects conflicts a caller may meet. */
  private static <T> T untilDecided(java.util.function.Supplier<T> call) {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        boolean open = code == Status.Code.ABORTED || code == Status.Code.UNAVAILABLE
            || code == Status.Code.DEADLINE_EXCEEDED;
        if (!open || attempt == 5) {
          throw e;
        }
      }
    }
  }

  /** Runs every call at once (released together), and returns each one's answer or failure. */
  private static <T> List<Object> concurrently(List<Callable<T>> calls) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(calls.size());
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<T>> futures = new ArrayList<>();
      for (Callable<T> call : calls) {
        futures.add(pool.submit(() -> {
          go.await();
          return call.call();
        }));
      }
      go.countDown();
      List<Object> outcomes = new ArrayList<>();
      for (Future<T> future : futures) {
        try {
          outcomes.add(future.get(60, TimeUnit.SECONDS));
        } catch (java.util.concurrent.ExecutionException e) {
          outcomes.add(e.getCause());
        }
      }
      return outcomes;
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aPlacedOrder_holdsItsStock_andItsLinesAreMergedAndPriced() {
    String product = id("P");
    orders.stock(product, "W1", 10);
    Order placed = placeUntilDecided(PlaceOrderRequest.newBuilder().setCustomerId(id("C")).setRequestId(id("req"))
        .addLines(line(product, "W1", 2, eur(3, 500_000_000)))
        .addLines(line(product, "W1", 1, eur(3, 500_000_000))) // merged with the first
        .build());
    assertThat(placed.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
    assertThat(placed.getVersion()).isEqualTo(1);
    assertThat(placed.getLinesList()).singleElement().satisfies(l -> assertThat(l.getQuantity()).isEqualTo(3));
    assertThat(placed.getLineCount()).isEqualTo(1);
    assertThat(placed.getTotal()).isEqualTo(eur(10, 500_000_000));
    assertThat(get(placed.getOrderId())).isEqualTo(placed);
    ProductInventory stock = orders.stockOf(product, "W1");
    assertThat(stock.getQuantity()).isEqualTo(10);
    assertThat(stock.getReserved()).isEqualTo(3);
    assertThat(stock.getAvailable()).isEqualTo(7);
    assertThat(orders.reservation(placed.getOrderId()).getState()).isEqualTo(ReservationState.RESERVATION_STATE_CONFIRMED);
  }

  @Test
  void tooLittleStock_isOutOfStock_namingWhatIsAvailable_keptRejected_andAnsweredTheSameOnRetry() {
    String product = id("P");
    orders.stock(product, "W1", 2);
    PlaceOrderRequest request = PlaceOrderRequest.newBuilder().setCustomerId(id("C")).setRequestId(id("req"))
        .setOrderId(id("O")).addLines(line(product, "W1", 3, eur(1, 0))).addLines(line(OrderFixture.PRODUCT,
            OrderFixture.WAREHOUSE, 1, eur(1, 0)))
        .build();
    StatusRuntimeException refused = failure(() -> placeUntilDecided(request));
    assertStatus(() -> { throw refused; }, Status.Code.FAILED_PRECONDITION, "OUT_OF_STOCK");
    PreconditionFailure violations = detail(refused, PreconditionFailure.class);
    assertThat(violations.getViolationsList()).singleElement().satisfies(v -> {
      assertThat(v.getType()).isEqualTo("OUT_OF_STOCK");
      assertThat(v.getSubject()).isEqualTo("products/" + product + "/warehouses/W1");
      assertThat(v.getDescription()).contains("3").contains("2");
    });
    // Kept, as REJECTED; nothing is held for it, and a tombstone keeps a late hold from succeeding.
    Order rejected = get(request.getOrderId());
    assertThat(rejected.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_REJECTED);
    assertThat(rejected.getRejectionReason()).isEqualTo("OUT_OF_STOCK");
    assertThat(orders.stockOf(product, "W1").getReserved()).isZero();
    assertThat(orders.reservation(request.getOrderId()).getState()).isEqualTo(ReservationState.RESERVATION_STATE_RELEASED);
    // The same request again: the same answer, with the same violations, even though stock came in since.
    orders.stock(product, "W1", 50);
    StatusRuntimeException again = failure(() -> placeUntilDecided(request));
    assertThat(again.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(detail(again, PreconditionFailure.class)).isEqualTo(violations);
    assertThat(orders.stockOf(product, "W1").getReserved()).isZero();
  }

  @ParameterizedTest(name = "K = {0}")
  @ValueSource(ints = {5, 1})
  void fortyBuyers_forKUnits_placeExactlyKOrders(int units) throws Exception {
    String product = id("P");
    orders.stock(product, "W1", units);
    List<Callable<Order>> buyers = IntStream.range(0, 40)
        .<Callable<Order>>mapToObj(i -> () -> placeUntilDecided(buy(product, "W1", 1)))
        .toList();
    List<Object> outcomes = concurrently(buyers);
    assertThat(outcomes).filteredOn(o -> o instanceof Order).hasSize(units)
        .allSatisfy(o -> assertThat(((Order) o).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED));
    assertThat(outcomes).filteredOn(o -> !(o instanceof Order)).hasSize(40 - units).allSatisfy(o ->
        assertThat(Status.fromThrowable((Throwable) o).getCode()).as(String.valueOf(o)).isEqualTo(Status.Code.FAILED_PRECONDITION));
    ProductInventory stock = orders.stockOf(product, "W1");
    assertThat(stock.getReserved()).isEqualTo(units);
    assertThat(stock.getAvailable()).isZero();
  }

  @Test
  void multiLineOrders_racingOverSharedProducts_neverHoldPartOfAnOrder() throws Exception {
    String a = id("P");
    String b = id("P");
    orders.stock(a, "W1", 6);
    orders.stock(b, "W1", 6);
    // Each order wants 2 of A and 2 of B, or 2 of A only, or 2 of B only: 12 orders for 6 units of each.
    List<PlaceOrderRequest> requests = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      PlaceOrderRequest.Builder request = PlaceOrderRequest.newBuilder().setCustomerId(id("C")).setRequestId(id("req"));
      if (i % 3 != 2) {
        request.addLines(line(a, "W1", 2, eur(1, 0)));
      }
      if (i % 3 != 1) {
        request.addLines(line(b, "W1", 2, eur(1, 0)));
      }
      requests.add(request.build());
    }
    List<Object> outcomes = concurrently(requests.stream()
        .<Callable<Order>>map(r -> () -> placeUntilDecided(r)).toList());
    long heldOfA = 0;
    long heldOfB = 0;
    for (Object outcome : outcomes) {
      if (outcome instanceof Order placed) {
        for (var l : placed.getLinesList()) {
          heldOfA += l.getProductId().equals(a) ? l.getQuantity() : 0;
          heldOfB += l.getProductId().equals(b) ? l.getQuantity() : 0;
        }
      } else {
        assertThat(Status.fromThrowable((Throwable) outcome).getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      }
    }
    // What the placed orders hold is exactly what the stock says is reserved: no refused order holds a part.
    assertThat(orders.stockOf(a, "W1").getReserved()).isEqualTo(heldOfA);
    assertThat(orders.stockOf(b, "W1").getReserved()).isEqualTo(heldOfB);
    assertThat(heldOfA).isLessThanOrEqualTo(6);
    assertThat(heldOfB).isLessThanOrEqualTo(6);
  }

  @Test
  void oneRequestIdSentTenTimesAtOnce_holdsOnce_andWithOtherLinesIsRefused() throws Exception {
    String product = id("P");
    orders.stock(product, "W1", 100);
    PlaceOrderRequest request = buy(product, "W1", 3);
    List<Object> outcomes = concurrently(IntStream.range(0, 10)
        .<Callable<Order>>mapToObj(i -> () -> placeUntilDecided(request)).toList());
    assertThat(outcomes).allSatisfy(o -> assertThat(o).isInstanceOf(Order.class));
    assertThat(outcomes.stream().map(o -> ((Order) o).getOrderId()).distinct()).hasSize(1);
    assertThat(orders.stockOf(product, "W1").getReserved()).isEqualTo(3);
    assertStatus(() -> placeUntilDecided(request.toBuilder().setLines(0, line(product, "W1", 4, eur(10, 0))).build()),
        Status.Code.ALREADY_EXISTS, "REQUEST_ID_REUSED");
    assertThat(orders.stockOf(product, "W1").getReserved()).isEqualTo(3);
  }

  @Test
  void cancellingTwice_givesTheStockBackOnce_andShippingTakesIt() {
    String product = id("P");
    orders.stock(product, "W1", 10);
    Order cancelled = placeUntilDecided(buy(product, "W1", 4));
    Order shipped = placeUntilDecided(buy(product, "W1", 3));
    assertThat(orders.stockOf(product, "W1").getReserved()).isEqualTo(7);

    assertThat(move(cancelled.getOrderId(), OrderStatus.ORDER_STATUS_CANCELLED).getStatus())
        .isEqualTo(OrderStatus.ORDER_STATUS_CANCELLED);
    // A repeated cancel is answered with the order as it is: nothing written, nothing given back again.
    Order again = move(cancelled.getOrderId(), OrderStatus.ORDER_STATUS_CANCELLED);
    assertThat(again.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_CANCELLED);
    assertThat(again.getVersion()).isEqualTo(2);
    // A step the inventory answers late stands owed and the recovery makes it (a slow machine's moto can be that
    // late): what is judged is the stock once made, given back once.
    Eventually.await(() -> orders.stockOf(product, "W1"), s -> s.getReserved() == 3);
    assertThat(orders.reservation(cancelled.getOrderId()).getState()).isEqualTo(ReservationState.RESERVATION_STATE_RELEASED);

    move(shipped.getOrderId(), OrderStatus.ORDER_STATUS_PAID);
    move(shipped.getOrderId(), OrderStatus.ORDER_STATUS_SHIPPED);
    ProductInventory stock = Eventually.await(() -> orders.stockOf(product, "W1"), s -> s.getQuantity() != 10);
    assertThat(stock.getQuantity()).as("on hand: the shipped units left").isEqualTo(7);
    assertThat(stock.getReserved()).isZero();
    assertThat(stock.getAvailable()).isEqualTo(7);
    assertThat(orders.reservation(shipped.getOrderId()).getState()).isEqualTo(ReservationState.RESERVATION_STATE_COMMITTED);
  }

  @Test
  void aShippingCommitDeferred_survivesTheDelivery_andTheRecoveryMakesIt() {
    String product = id("P");
    orders.stock(product, "W1", 10);
    Order placed = placeUntilDecided(buy(product, "W1", 2));
    move(placed.getOrderId(), OrderStatus.ORDER_STATUS_PAID);
    // The inventory's commit transaction fails for a while: SHIPPED stands, owing its COMMIT.
    orders.inventoryProxy.inject("TransactWriteItems", Fault.HTTP_500, 1000);
    assertThat(move(placed.getOrderId(), OrderStatus.ORDER_STATUS_SHIPPED).getStatus())
        .isEqualTo(OrderStatus.ORDER_STATUS_SHIPPED);
    assertThat(move(placed.getOrderId(), OrderStatus.ORDER_STATUS_DELIVERED).getStatus())
        .isEqualTo(OrderStatus.ORDER_STATUS_DELIVERED);
    assertThat(orders.stockOf(product, "W1").getQuantity()).as("not committed yet").isEqualTo(10);
    orders.inventoryProxy.clear();
    // The delivery kept the COMMIT it owed: the recovery makes it, and the units leave the warehouse.
    ProductInventory after = Eventually.await(() -> orders.stockOf(product, "W1"), s -> s.getQuantity() == 8);
    assertThat(after.getReserved()).isZero();
    assertThat(orders.reservation(placed.getOrderId()).getState()).isEqualTo(ReservationState.RESERVATION_STATE_COMMITTED);
  }

  @Test
  void aCancelWhoseReleaseFailed_isFinishedByTheRecovery_once() {
    String product = id("P");
    orders.stock(product, "W1", 10);
    Order placed = placeUntilDecided(buy(product, "W1", 4));
    // The inventory's release transaction fails for a while: the cancel stands, owing its release.
    orders.inventoryProxy.inject("TransactWriteItems", Fault.HTTP_500, 1000);
    Order cancelled = move(placed.getOrderId(), OrderStatus.ORDER_STATUS_CANCELLED);
    assertThat(cancelled.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_CANCELLED);
    assertThat(orders.stockOf(product, "W1").getReserved()).as("not released yet").isEqualTo(4);
    orders.inventoryProxy.clear();
    Eventually.await(() -> orders.stockOf(product, "W1"), s -> s.getReserved() == 0);
    Eventually.await(() -> orders.stub().listStalledOrders(dev.warehouse.order.v1.ListStalledOrdersRequest.getDefaultInstance())
        .getOrdersList().stream().noneMatch(o -> o.getOrderId().equals(placed.getOrderId())), done -> done);
    assertThat(orders.stockOf(product, "W1").getAvailable()).isEqualTo(10);
  }

  @Test
  void aCancelRacingTheRecovery_givesTheStockBackOnce() throws Exception {
    String product = id("P");
    orders.stock(product, "W1", 10);
    Order placed = placeUntilDecided(buy(product, "W1", 4));
    // The cancel's own release waits at the inventory past the step's due time, so the cancel answers after its
    // step budget and the recovery sends its release too: both reach the inventory, and the units come back once.
    orders.inventoryProxy.delay("TransactWriteItems", GRACE.plus(Duration.ofSeconds(1)), 1);
    Order cancelled = orders.stub().withDeadlineAfter(20, TimeUnit.SECONDS).updateOrderStatus(UpdateOrderStatusRequest
        .newBuilder().setOrderId(placed.getOrderId()).setStatus(OrderStatus.ORDER_STATUS_CANCELLED).build());
    assertThat(cancelled.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_CANCELLED);
    Eventually.await(() -> orders.stockOf(product, "W1"), s -> s.getReserved() == 0);
    Eventually.await(() -> orders.stub().listStalledOrders(dev.warehouse.order.v1.ListStalledOrdersRequest.getDefaultInstance())
        .getOrdersList().stream().noneMatch(o -> o.getOrderId().equals(placed.getOrderId())), done -> done);
    ProductInventory stock = orders.stockOf(product, "W1");
    assertThat(stock.getReserved()).isZero();
    assertThat(stock.getAvailable()).as("given back once, not twice").isEqualTo(10);
    assertThat(stock.getQuantity()).isEqualTo(10);
  }

  @Test
  void aPlacingCutOffAfterItsStockWasHeld_isPlacedByTheRecovery() {
    String product = id("P");
    orders.stock(product, "W1", 10);
    PlaceOrderRequest request = buy(product, "W1", 2).toBuilder().setOrderId(id("O")).build();
    // The reserve and confirm succeed at the inventory; the order's own PLACED write fails until the call is over.
    orders.proxy.injectWhere("TransactWriteItems", "\"PLACED\"", Fault.HTTP_500, 1000);
    StatusRuntimeException cut = failure(() -> orders.stub().withDeadlineAfter(1500, TimeUnit.MILLISECONDS)
        .placeOrder(request));
    assertThat(cut.getStatus().getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);
    assertThat(get(request.getOrderId()).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PENDING);
    assertThat(orders.stockOf(product, "W1").getReserved()).isEqualTo(2);
    orders.proxy.clear();
    Order placed = Eventually.await(() -> get(request.getOrderId()), o -> o.getStatus() == OrderStatus.ORDER_STATUS_PLACED);
    assertThat(placed.getVersion()).isEqualTo(1);
    // The caller's retry answers the order the recovery placed, and holds nothing more.
    assertThat(placeUntilDecided(request)).isEqualTo(placed);
    assertThat(orders.stockOf(product, "W1").getReserved()).isEqualTo(2);
  }

  @Test
  void aPlacingCutOffBetweenHoldAndConfirm_isPlacedByTheRecovery() {
    String product = id("P");
    orders.stock(product, "W1", 10);
    PlaceOrderRequest request = buy(product, "W1", 1).toBuilder().setOrderId(id("O")).build();
    // The inventory's confirm (one UpdateItem of the reservation) fails: the hold is there, unconfirmed.
    orders.inventoryProxy.inject("UpdateItem", Fault.HTTP_500, 1000);
    failure(() -> orders.stub().withDeadlineAfter(1500, TimeUnit.MILLISECONDS).placeOrder(request));
    assertThat(orders.reservation(request.getOrderId()).getState()).isEqualTo(ReservationState.RESERVATION_STATE_HELD);
    orders.inventoryProxy.clear();
    Eventually.await(() -> get(request.getOrderId()), o -> o.getStatus() == OrderStatus.ORDER_STATUS_PLACED);
    assertThat(orders.reservation(request.getOrderId()).getState()).isEqualTo(ReservationState.RESERVATION_STATE_CONFIRMED);
    assertThat(orders.stockOf(product, "W1").getReserved()).isEqualTo(1);
  }

  @Test
  void aPlacingCutOffBeforeItsHold_isRejectedByTheRecovery_andALateHoldFails() {
    String product = id("P");
    orders.stock(product, "W1", 10);
    PlaceOrderRequest request = buy(product, "W1", 1).toBuilder().setOrderId(id("O")).build();
    // The inventory cannot hold anything: the order is written PENDING and stays so.
    orders.inventoryProxy.inject("TransactWriteItems", Fault.HTTP_500, 1000);
    failure(() -> orders.stub().withDeadlineAfter(1500, TimeUnit.MILLISECONDS).placeOrder(request));
    assertThat(get(request.getOrderId()).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PENDING);
    orders.inventoryProxy.clear();
    Order rejected = Eventually.await(() -> get(request.getOrderId()),
        o -> o.getStatus() == OrderStatus.ORDER_STATUS_REJECTED);
    assertThat(rejected.getRejectionReason()).isEqualTo("ABANDONED");
    // A hold arriving now (a retry of the cut-off call, say) fails on the tombstone, and holds nothing.
    assertStatus(() -> orders.reservations().reserveStock(dev.warehouse.inventory.v1.ReserveStockRequest.newBuilder()
            .setOrderId(request.getOrderId()).addLines(dev.warehouse.inventory.v1.ReservationLine.newBuilder()
                .setProductId(product).setWarehouseId("W1").setQuantity(1)).build()),
        Status.Code.FAILED_PRECONDITION, "RESERVATION_RELEASED");
    assertThat(orders.stockOf(product, "W1").getReserved()).isZero();
    // And the caller's retry hears the same end.
    assertStatus(() -> placeUntilDecided(request), Status.Code.FAILED_PRECONDITION, "ABANDONED");
  }
}
