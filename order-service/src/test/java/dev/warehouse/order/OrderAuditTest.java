package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.id;
import static dev.warehouse.order.OrderFixture.order;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.store.OrderItems;
import dev.warehouse.order.v1.Order;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.testing.AuditChecks;
import dev.warehouse.runtime.testing.MotoServer;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The consistency audit finds missing and disagreeing copies, and says so in its exit status: 0 clean,
 * 1 problems found, 2 bad arguments, 3 could not finish; it pushes that outcome to a Pushgateway when
 * one is configured, and a Pushgateway that is down changes nothing.
 */
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

  private static ServiceConfig config() {
    return AuditChecks.config(orders.table, MotoServer.endpoint(), Duration.ofSeconds(10));
  }

  /** Runs the audit, checking the outcome it pushes to a Pushgateway (AuditChecks#runPushing). */
  private static AuditChecks.Run runAudit() {
    return AuditChecks.runPushing(OrderAudit::run, config(), "orders", ARGS);
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
    AuditChecks.assertPushgatewayDown_keepsTheExitStatus(OrderAudit::run, config(), ARGS);
  }

  @Test
  void exitsTwo_withTheUsage_onBadArguments() {
    AuditChecks.assertExitsTwoWithTheUsage_onBadArguments(OrderAudit::run, orders.table);
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbFailsUnderIt() {
    AuditChecks.assertExitsThree_whenDynamoDbFailsUnderIt(OrderAudit::run, orders.table);
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbTimesOut() {
    AuditChecks.assertExitsThree_whenDynamoDbTimesOut(OrderAudit::run, orders.table);
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbIsUnreachable() throws Exception {
    AuditChecks.assertExitsThree_whenDynamoDbIsUnreachable(OrderAudit::run, orders.table);
  }
}
