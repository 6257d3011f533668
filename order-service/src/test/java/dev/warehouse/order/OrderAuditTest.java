package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.id;
import static dev.warehouse.order.OrderFixture.order;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.store.OrderItems;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.testing.AuditChecks;
import dev.warehouse.runtime.testing.MotoServer;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The consistency audit finds missing and disagreeing copies, and says so in its exit status: 0 clean,
 * 1 problems found, 2 bad arguments, 3 could not finish; it pushes that outcome to a Pushgateway when
 * one is configured, and a Pushgateway that is down changes nothing. It also finds orders whose
 * reservation at the inventory does not match them, and orders left owing a stock step.
 */
@Tag("integration")
class OrderAuditTest {

  private static OrderFixture orders;

  @BeforeAll
  static void start() throws Exception {
    orders = new OrderFixture();
  }

  @AfterAll
  static void stop() throws Exception {
    orders.close();
  }

  private static final String[] ARGS = {"--segments", "3", "--pages-per-second", "500"};

  private static StoreServiceConfig config() {
    return AuditChecks.config(orders.table, MotoServer.endpoint(), Duration.ofSeconds(10));
  }

  /** Runs the audit, checking the outcome it pushes to a Pushgateway (AuditChecks#runPushing). */
  private static AuditChecks.Run runAudit() {
    return AuditChecks.runPushing(OrderAuditTest::auditWithDefaultPeriod, config(), "orders", ARGS);
  }

  @Test
  void reportsBrokenCopies_andExitsNonZero_onlyWhenThereAreAny() {
    for (int i = 0; i < 5; i++) {
      orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-2" + i).build());
    }
    AuditChecks.Run clean = runAudit();
    assertThat(clean.status()).isZero();
    assertThat(clean.output()).contains("orders=5 problems=0");

    Order lostCorridor = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build());
    Order lostDirect = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build());
    Order drifted = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build());
    orders.dynamo.deleteItem(b -> b.tableName(orders.table).key(OrderItems.corridorKey(
        lostCorridor.getCustomerId(), LocalDate.parse(lostCorridor.getOrderDate()), lostCorridor.getOrderId()))).join();
    orders.dynamo.deleteItem(b -> b.tableName(orders.table).key(OrderItems.directKey(lostDirect.getOrderId()))).join();
    orders.dynamo.updateItem(b -> b.tableName(orders.table).key(OrderItems.directKey(drifted.getOrderId()))
        .updateExpression("SET #s = :s").expressionAttributeNames(Map.of("#s", "status"))
        .expressionAttributeValues(Map.of(":s", AttributeValue.fromS("PAID")))).join();

    AuditChecks.Run broken = runAudit();
    assertThat(broken.status()).isEqualTo(1);
    assertThat(broken.output())
        .contains("MISSING_CUSTOMER_COPY order_id=" + lostCorridor.getOrderId())
        .contains("MISSING_DIRECT_COPY order_id=" + lostDirect.getOrderId())
        .contains("COPIES_DISAGREE order_id=" + drifted.getOrderId() + " attributes=status")
        .contains("problems=3");
    AuditChecks.assertPushgatewayDown_keepsTheExitStatus(OrderAuditTest::auditWithDefaultPeriod, config(), ARGS);
  }

  /**
   * Real orders, placed, shipped and cancelled through the services on their own table (the recovery
   * off, so nothing finishes what the test leaves owed), then broken in the table: each break is found,
   * and what the services are still working on within a recovery period is not.
   */
  @Test
  void reportsReservationsThatDoNotMatchTheirOrders_andStepsOwedTooLong() throws Exception {
    try (OrderFixture own = new OrderFixture(OrderFixture.CALL_TIMEOUT,
        settings -> settings.withRecovery(OrderSettings.DEFAULT_STEP_GRACE, Duration.ZERO))) {
      Order placed = place(own);
      Order shipped = move(own, move(own, place(own), OrderStatus.ORDER_STATUS_PAID), OrderStatus.ORDER_STATUS_SHIPPED);
      Order cancelled = move(own, place(own), OrderStatus.ORDER_STATUS_CANCELLED);
      assertThat(own.reservation(shipped.getOrderId()).getState().name()).isEqualTo("RESERVATION_STATE_COMMITTED");
      assertThat(own.reservation(cancelled.getOrderId()).getState().name()).isEqualTo("RESERVATION_STATE_RELEASED");
      AuditChecks.Run clean = AuditChecks.run(OrderAuditTest::auditWithDefaultPeriod, config(own), ARGS);
      assertThat(clean.output()).contains("orders=3 problems=0");
      assertThat(clean.status()).isZero();

      Order lost = place(own);
      Order releasedUnderIt = place(own);
      Order otherLines = place(own);
      Order notReleased = move(own, place(own), OrderStatus.ORDER_STATUS_CANCELLED);
      Order releaseOwed = move(own, place(own), OrderStatus.ORDER_STATUS_CANCELLED);
      Order commitOverdue = move(own, move(own, place(own), OrderStatus.ORDER_STATUS_PAID), OrderStatus.ORDER_STATUS_SHIPPED);
      Order commitOwed = move(own, move(own, place(own), OrderStatus.ORDER_STATUS_PAID), OrderStatus.ORDER_STATUS_SHIPPED);
      Order garbled = place(own);
      own.dynamo.deleteItem(b -> b.tableName(own.table).key(OrderAudit.reservationKey(lost.getOrderId()))).join();
      setReservation(own, releasedUnderIt, "SET #s = :v", Map.of(":v", AttributeValue.fromS("RELEASED")));
      setReservation(own, otherLines, "SET #l[0].quantity = :v", Map.of(":v", AttributeValue.fromN("2")));
      setReservation(own, notReleased, "SET #s = :v", Map.of(":v", AttributeValue.fromS("CONFIRMED")));
      // Cancelled, its release owed and due in a minute: the services are not done with it yet.
      setReservation(own, releaseOwed, "SET #s = :v", Map.of(":v", AttributeValue.fromS("CONFIRMED")));
      owe(own, releaseOwed, "RELEASE", Instant.now().plusSeconds(60));
      // Shipped, its commit owed for an hour: the reservation still CONFIRMED is fine, the step is not.
      setReservation(own, commitOverdue, "SET #s = :v", Map.of(":v", AttributeValue.fromS("CONFIRMED")));
      owe(own, commitOverdue, "COMMIT", Instant.now().minusSeconds(3600));
      // Shipped, its commit owed since a moment (less than a recovery period past due): not a finding.
      setReservation(own, commitOwed, "SET #s = :v", Map.of(":v", AttributeValue.fromS("CONFIRMED")));
      owe(own, commitOwed, "COMMIT", Instant.now().minusSeconds(1));
      // A direct copy that is no order any more (its currency gone): its copies disagree, and it is unreadable.
      own.dynamo.updateItem(b -> b.tableName(own.table).key(OrderItems.directKey(garbled.getOrderId()))
          .updateExpression("REMOVE total_currency")).join();

      AuditChecks.Run broken = AuditChecks.run((c, a, out) -> OrderAudit.run(c, a, out, Duration.ofMinutes(5)),
          config(own), ARGS);
      assertThat(broken.status()).isEqualTo(1);
      assertThat(broken.output())
          .contains("MISSING_RESERVATION order_id=" + lost.getOrderId() + " status=PLACED")
          .contains("RESERVATION_STATE_MISMATCH order_id=" + releasedUnderIt.getOrderId()
              + " status=PLACED reservation=RELEASED expected=CONFIRMED")
          .contains("RESERVATION_LINES_DISAGREE order_id=" + otherLines.getOrderId())
          .contains("RESERVATION_NOT_RELEASED order_id=" + notReleased.getOrderId() + " status=CANCELLED reservation=CONFIRMED")
          .contains("STOCK_STEP_OVERDUE order_id=" + commitOverdue.getOrderId() + " status=SHIPPED step=COMMIT")
          .doesNotContain(placed.getOrderId(), shipped.getOrderId(), cancelled.getOrderId(),
              releaseOwed.getOrderId(), commitOwed.getOrderId())
          .contains("UNREADABLE_ORDER order_id=" + garbled.getOrderId())
          .contains("COPIES_DISAGREE order_id=" + garbled.getOrderId() + " attributes=total_currency")
          .contains("orders=11 problems=7");

      // The same owed commit, now more than a recovery period past due: a finding.
      AuditChecks.Run later = AuditChecks.run((c, a, out) -> OrderAudit.run(c, a, out, Duration.ZERO), config(own), ARGS);
      assertThat(later.output()).contains("STOCK_STEP_OVERDUE order_id=" + commitOwed.getOrderId())
          .doesNotContain(releaseOwed.getOrderId()).contains("problems=8");
    }
  }

  private static StoreServiceConfig config(OrderFixture fixture) {
    return AuditChecks.config(fixture.table, MotoServer.endpoint(), Duration.ofSeconds(10));
  }

  private static Order place(OrderFixture fixture) {
    return fixture.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build());
  }

  private static Order move(OrderFixture fixture, Order order, OrderStatus status) {
    return fixture.stub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder().setOrderId(order.getOrderId())
        .setStatus(status).build());
  }

  private static void setReservation(OrderFixture fixture, Order order, String update, Map<String, AttributeValue> values) {
    fixture.dynamo.updateItem(b -> b.tableName(fixture.table).key(OrderAudit.reservationKey(order.getOrderId()))
        .updateExpression(update).expressionAttributeNames(update.contains("#s") ? Map.of("#s", "state") : Map.of("#l", "lines"))
        .expressionAttributeValues(values)).join();
  }

  /** Leaves {@code step} owed on the order's direct copy, as a crash between its two writes would. */
  private static void owe(OrderFixture fixture, Order order, String step, Instant due) {
    fixture.dynamo.updateItem(b -> b.tableName(fixture.table).key(OrderItems.directKey(order.getOrderId()))
        .updateExpression("SET stock_step = :s, stock_step_due = :d")
        .expressionAttributeValues(Map.of(":s", AttributeValue.fromS(step), ":d", AttributeValue.fromS(due.toString()))))
        .join();
  }

  @Test
  void exitsTwo_withTheUsage_onBadArguments() {
    AuditChecks.assertExitsTwoWithTheUsage_onBadArguments(OrderAuditTest::auditWithDefaultPeriod, orders.table);
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbFailsUnderIt() {
    AuditChecks.assertExitsThree_whenDynamoDbFailsUnderIt(OrderAuditTest::auditWithDefaultPeriod, orders.table);
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbTimesOut() {
    AuditChecks.assertExitsThree_whenDynamoDbTimesOut(OrderAuditTest::auditWithDefaultPeriod, orders.table);
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbIsUnreachable() throws Exception {
    AuditChecks.assertExitsThree_whenDynamoDbIsUnreachable(OrderAuditTest::auditWithDefaultPeriod, orders.table);
  }

  /** The audit command as the order-service runs it with its default recovery period. */
  private static int auditWithDefaultPeriod(StoreServiceConfig config, String[] args, java.io.PrintStream out) {
    return OrderAudit.run(config, args, out, OrderSettings.DEFAULT_RECOVERY_PERIOD);
  }
}
