package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.id;
import static dev.warehouse.order.OrderFixture.order;
import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.testing.CallBounds;
import dev.warehouse.runtime.testing.DynamoFaultProxy.Fault;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Faults injected between the order-service and moto: transient ones are retried and the call
 * succeeds; persistent ones end within the call's deadline with the status their cause deserves;
 * either way both copies of every order agree afterwards (the audit runs at the end).
 */
@Tag("integration")
class OrderFaultsTest {

  private static final String TRANSACT = "TransactWriteItems";
  private static final long DEADLINE_MS = 5_000;
  private static OrderFixture orders;

  @BeforeAll
  static void start() throws Exception {
    orders = new OrderFixture(OrderFixture.FAULT_TEST_CALL_TIMEOUT);
  }

  @AfterEach
  void clearFaults() {
    orders.proxy.clear();
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      assertThat(orders.audit().findings()).as("orders whose copies disagree").isEmpty();
    } finally {
      orders.close();
    }
  }

  private static Order place(PlaceOrderRequest request) {
    return orders.stub().withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).placeOrder(request);
  }

  private static void assertPlacedDespite(Fault fault, int times) {
    String orderId = id("O");
    // This order's own transactions: a call still in flight from an earlier test is not one of its attempts.
    IntSupplier attempts = orders.proxy.count(TRANSACT, orderId);
    orders.proxy.injectWhere(TRANSACT, orderId, fault, times);
    Order placed = place(order(id("C"), orderId, "2026-07-26").build());
    // The faults hit the first transaction (the PENDING order), retried until it commits; the second (PLACED) commits at once.
    assertThat(attempts.getAsInt()).as("transaction attempts").isEqualTo(times + 2);
    assertThat(orders.stub().getOrder(GetOrderRequest.newBuilder().setOrderId(placed.getOrderId())
        .setConsistentRead(true).build())).isEqualTo(placed);
  }

  @Test
  void transientConflicts_areRetried() {
    assertPlacedDespite(Fault.TRANSACTION_CONFLICT, 2);
  }

  @Test
  void throttling_isRetried() {
    assertPlacedDespite(Fault.THROTTLING, 1);
  }

  @Test
  void serverErrors_areRetried() {
    assertPlacedDespite(Fault.HTTP_500, 2);
  }

  @Test
  void droppedConnections_areRetried() {
    assertPlacedDespite(Fault.DROP_CONNECTION, 1);
  }

  @Test
  void statusUpdates_areRetriedToo() {
    String orderId = place(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    orders.proxy.inject(TRANSACT, Fault.TRANSACTION_CONFLICT, 1);
    Order paid = orders.stub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder()
        .setOrderId(orderId).setStatus(OrderStatus.ORDER_STATUS_PAID).setExpectedVersion(1).build());
    assertThat(paid.getVersion()).isEqualTo(2);
  }

  @Test
  void persistentConflicts_areAborted_afterTheBoundedAttempts() {
    int before = orders.proxy.calls(TRANSACT);
    orders.proxy.inject(TRANSACT, Fault.TRANSACTION_CONFLICT, Integer.MAX_VALUE);
    String orderId = id("O");
    assertStatus(() -> place(order(id("C"), orderId, "2026-07-26").build()), Status.Code.ABORTED, "TRANSACTION_CONFLICT");
    assertThat(orders.proxy.calls(TRANSACT) - before).isEqualTo(DynamoCalls.MAX_ATTEMPTS);
    orders.proxy.clear();
    assertStatus(() -> orders.stub().getOrder(GetOrderRequest.newBuilder().setOrderId(orderId).build()),
        Status.Code.NOT_FOUND, "ORDER_NOT_FOUND");
  }

  @Test
  void persistentThrottling_isResourceExhausted() {
    orders.proxy.inject(TRANSACT, Fault.THROTTLING, Integer.MAX_VALUE);
    assertStatus(() -> place(order(id("C"), id("O"), "2026-07-26").build()),
        Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED");
  }

  @Test
  void persistentServerErrors_areUnavailable_withinTheDeadline() {
    orders.proxy.inject(TRANSACT, Fault.HTTP_500, Integer.MAX_VALUE);
    // Within the deadline: past it the caller would have seen DEADLINE_EXCEEDED instead.
    assertStatus(() -> place(order(id("C"), id("O"), "2026-07-26").build()), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE");
  }

  @Test
  void persistentSlowness_isUnavailable_withinTheDeadline_andARetryFindsTheOrderPlacedOnce() {
    orders.proxy.delay(TRANSACT, OrderFixture.FAULT_TEST_CALL_TIMEOUT, Integer.MAX_VALUE);
    PlaceOrderRequest request = order(id("C"), id("O"), "2026-07-26").build();
    assertStatus(() -> place(request), Status.Code.UNAVAILABLE, "DATABASE_TIMEOUT"); // not DEADLINE_EXCEEDED: within it

    // The slow attempts may still have landed: the caller cannot know, so it retries with the same
    // request id and gets the one order, whether it was placed then or now.
    orders.proxy.clear();
    Order placed = place(request);
    assertThat(placed.getOrderId()).isEqualTo(request.getOrderId());
    assertThat(place(request)).isEqualTo(placed);
  }

  @Test
  void shortDelays_withinTheAttemptTimeout_cost_nothingButTime() {
    orders.proxy.delay(TRANSACT, Duration.ofMillis(100), 1);
    assertThat(place(order(id("C"), id("O"), "2026-07-26").build()).getVersion()).isEqualTo(1);
  }

  @Test
  void statusUpdate_whoseAttemptCommittedButAnsweredLate_answersTheCommittedOrder() {
    String orderId = place(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    // Applied at once, answered after the attempt's timeout (a quarter of 2 s): the retry carries the
    // same client request token, so DynamoDB answers it as done instead of failing its version check.
    orders.proxy.answerLate(TRANSACT, Duration.ofMillis(800), 1);
    Order paid = orders.stub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder()
        .setOrderId(orderId).setStatus(OrderStatus.ORDER_STATUS_PAID).setExpectedVersion(1).build());
    assertThat(paid.getVersion()).isEqualTo(2);
    assertThat(paid.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PAID);
    assertThat(orders.stub().getOrder(GetOrderRequest.newBuilder().setOrderId(orderId).setConsistentRead(true).build()))
        .isEqualTo(paid);
  }

  @Test
  void placeOrder_whoseAttemptCommittedButAnsweredLate_answersTheOrderPlacedOnce() {
    PlaceOrderRequest request = order(id("C"), id("O"), "2026-07-26").build();
    orders.proxy.answerLate(TRANSACT, Duration.ofMillis(800), 1);
    Order placed = place(request);
    assertThat(placed.getOrderId()).isEqualTo(request.getOrderId());
    assertThat(orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
        .setCustomerId(request.getCustomerId()).setConsistentRead(true).build()).getOrdersList())
        .containsExactly(OrderFixture.summary(placed));
  }

  @Test
  void reads_againstADatabaseThatNeverAnswers_stopAtTheCallersDeadline() {
    String orderId = place(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    orders.recorder.clear();
    orders.proxy.delay("GetItem", Duration.ofSeconds(30), Integer.MAX_VALUE);
    long started = System.nanoTime();
    assertThat(failure(() -> orders.stub().withDeadlineAfter(1, TimeUnit.SECONDS)
        .getOrder(GetOrderRequest.newBuilder().setOrderId(orderId).build())).getStatus().getCode())
        .isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    CallBounds.assertNoWorkPast(orders.recorder, started, Duration.ofMillis(1200));
  }

  @Test
  void statusUpdates_againstADatabaseThatNeverAnswers_stopAtTheCallersDeadline() {
    String orderId = place(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    orders.recorder.clear();
    orders.proxy.delay(TRANSACT, Duration.ofSeconds(30), Integer.MAX_VALUE);
    long started = System.nanoTime();
    assertThat(failure(() -> orders.stub().withDeadlineAfter(1, TimeUnit.SECONDS)
        .updateOrderStatus(UpdateOrderStatusRequest.newBuilder().setOrderId(orderId)
            .setStatus(OrderStatus.ORDER_STATUS_PAID).build())).getStatus().getCode())
        .isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    CallBounds.assertNoWorkPast(orders.recorder, started, Duration.ofMillis(1200));
  }

  /**
   * The bound of one user call (docs/data-access.md, docs/gateway.md): each DynamoDB operation is tried
   * at most MAX_ATTEMPTS times.
   */
  @Test
  void persistentServerErrors_onReads_makeAtMostTheBoundedAttempts() {
    String orderId = place(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    for (String operation : new String[] {"GetItem", "Query"}) {
      int before = orders.proxy.calls(operation);
      orders.proxy.inject(operation, Fault.HTTP_500, Integer.MAX_VALUE);
      assertStatus(() -> {
        if (operation.equals("GetItem")) {
          orders.stub().getOrder(GetOrderRequest.newBuilder().setOrderId(orderId).build());
        } else {
          orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId("C1").build());
        }
      }, Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE");
      assertThat(orders.proxy.calls(operation) - before).as(operation + " attempts").isEqualTo(DynamoCalls.MAX_ATTEMPTS);
      orders.proxy.clear();
    }
  }

  @Test
  void metrics_showOutcomesAttemptsAndRetries() throws Exception {
    orders.proxy.inject(TRANSACT, Fault.TRANSACTION_CONFLICT, 1);
    place(order(id("C"), id("O"), "2026-07-26").build());
    String metrics = orders.scrapeMetrics();
    assertThat(metrics)
        .contains("dynamodb_transactions_total{application=\"order-service\",operation=\"PlaceOrder\",outcome=\"committed\"}")
        .contains("dynamodb_transaction_duration_seconds_bucket{application=\"order-service\",operation=\"PlaceOrder\",outcome=\"committed\"")
        .contains("dynamodb_transaction_attempts_count{application=\"order-service\",operation=\"PlaceOrder\"}")
        .contains("resilience4j_retry_calls_total{application=\"order-service\",kind=\"successful_with_retry\",name=\"dynamodb\"}");
  }
}
