package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.id;
import static dev.warehouse.order.OrderFixture.order;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.store.OrderItems;
import dev.warehouse.order.v1.Order;
import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The consistency audit finds missing and disagreeing copies, and says so in its exit status: 0 clean,
 * 1 problems found, 2 bad arguments, 3 could not finish.
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

  private static int runAudit(ByteArrayOutputStream out) {
    return OrderAudit.run(TestServices.config("audit", orders.table, MotoServer.endpoint(), Duration.ofSeconds(10)),
        new String[] {"--segments", "3", "--pages-per-second", "500"}, new PrintStream(out, true, StandardCharsets.UTF_8));
  }

  @Test
  void reportsBrokenCopies_andExitsNonZero_onlyWhenThereAreAny() {
    for (int i = 0; i < 5; i++) {
      orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-2" + i).build());
    }
    ByteArrayOutputStream clean = new ByteArrayOutputStream();
    assertThat(runAudit(clean)).isZero();
    assertThat(clean.toString(StandardCharsets.UTF_8)).contains("orders=5 problems=0");

    Order lostCorridor = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build());
    Order lostDirect = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build());
    Order drifted = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build());
    orders.dynamo.deleteItem(b -> b.tableName(orders.table).key(OrderItems.corridorKey(
        lostCorridor.getCustomerId(), LocalDate.parse(lostCorridor.getOrderDate()), lostCorridor.getOrderId()))).join();
    orders.dynamo.deleteItem(b -> b.tableName(orders.table).key(OrderItems.directKey(lostDirect.getOrderId()))).join();
    orders.dynamo.updateItem(b -> b.tableName(orders.table).key(OrderItems.directKey(drifted.getOrderId()))
        .updateExpression("SET #s = :s").expressionAttributeNames(Map.of("#s", "status"))
        .expressionAttributeValues(Map.of(":s", AttributeValue.fromS("PAID")))).join();

    ByteArrayOutputStream broken = new ByteArrayOutputStream();
    assertThat(runAudit(broken)).isEqualTo(1);
    assertThat(broken.toString(StandardCharsets.UTF_8))
        .contains("MISSING_CUSTOMER_COPY order_id=" + lostCorridor.getOrderId())
        .contains("MISSING_DIRECT_COPY order_id=" + lostDirect.getOrderId())
        .contains("COPIES_DISAGREE order_id=" + drifted.getOrderId() + " attributes=status")
        .contains("problems=3");
  }

  @Test
  void exitsTwo_withTheUsage_onBadArguments() {
    for (String[] args : List.of(new String[] {"--segments", "0"}, new String[] {"--segments"},
        new String[] {"--pages-per-second", "many"}, new String[] {"--verbose"})) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      assertThat(OrderAudit.run(TestServices.config("audit", orders.table), args,
          new PrintStream(out, true, StandardCharsets.UTF_8))).as(String.join(" ", args)).isEqualTo(2);
      assertThat(out.toString(StandardCharsets.UTF_8))
          .contains("usage: audit [--segments N] [--pages-per-second N]")
          .contains("3 could not finish");
    }
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbFailsUnderIt() {
    try (DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint())) {
      proxy.inject("Scan", DynamoFaultProxy.Fault.HTTP_500, Integer.MAX_VALUE);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int status = OrderAudit.run(TestServices.config("audit", orders.table, proxy.endpoint(), Duration.ofSeconds(5)),
          new String[] {"--segments", "2"}, new PrintStream(out, true, StandardCharsets.UTF_8));

      assertThat(status).isEqualTo(3);
      assertThat(proxy.injected()).isPositive();
      assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).singleElement().asString()
          .startsWith("audit table=" + orders.table + " could not finish: ")
          .contains("HTTP 500", "InternalServerError");
    }
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbTimesOut() {
    try (DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint())) {
      proxy.delay("Scan", Duration.ofSeconds(5), Integer.MAX_VALUE);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int status = OrderAudit.run(TestServices.config("audit", orders.table, proxy.endpoint(), Duration.ofSeconds(1)),
          new String[0], new PrintStream(out, true, StandardCharsets.UTF_8));

      assertThat(status).isEqualTo(3);
      assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).singleElement().asString()
          .isEqualTo("audit table=" + orders.table + " could not finish: DynamoDB did not answer within "
              + "DYNAMODB_CALL_TIMEOUT_MS=1000");
    }
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbIsUnreachable() throws Exception {
    URI nobody;
    try (ServerSocket closedSoon = new ServerSocket(0)) {
      nobody = URI.create("http://127.0.0.1:" + closedSoon.getLocalPort());
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status = OrderAudit.run(TestServices.config("audit", orders.table, nobody, Duration.ofSeconds(5)),
        new String[0], new PrintStream(out, true, StandardCharsets.UTF_8));

    assertThat(status).isEqualTo(3);
    assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).singleElement().asString()
        .startsWith("audit table=" + orders.table + " could not finish: ")
        .contains("could not reach DynamoDB at " + nobody);
  }
}
