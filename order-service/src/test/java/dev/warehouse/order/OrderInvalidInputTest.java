package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.eur;
import static dev.warehouse.order.OrderFixture.line;
import static dev.warehouse.testing.Statuses.assertInvalid;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.type.Money;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every bad input is INVALID_ARGUMENT naming each bad field, and no DynamoDB request is made. */
@Tag("integration")
class OrderInvalidInputTest {

  private static OrderFixture orders;

  @BeforeAll
  static void start() throws Exception {
    orders = new OrderFixture();
  }

  @AfterAll
  static void stop() throws Exception {
    orders.close();
  }

  @BeforeEach
  void clearRecorder() {
    orders.recorder.clear();
  }

  private static PlaceOrderRequest.Builder valid() {
    return PlaceOrderRequest.newBuilder().setCustomerId("C4821").setOrderId("O1").setOrderDate("2026-07-26")
        .addLines(line("P1", "W1", 2, eur(5, 0))).setTotal(eur(10, 0)).setRequestId("r-1");
  }

  private static ListCustomerOrdersRequest.Builder list() {
    return ListCustomerOrdersRequest.newBuilder().setCustomerId("C4821");
  }

  static Stream<Arguments> badRequests() {
    return Stream.of(
        bad("empty customer", () -> orders.stub().placeOrder(valid().setCustomerId("").build()), "customer_id"),
        bad("over-long order id", () -> orders.stub().placeOrder(valid().setOrderId("O".repeat(65)).build()), "order_id"),
        bad("key delimiter in order id", () -> orders.stub().placeOrder(valid().setOrderId("O1#METADATA").build()), "order_id"),
        bad("malformed date", () -> orders.stub().placeOrder(valid().setOrderDate("26/07/2026").build()), "order_date"),
        bad("impossible date", () -> orders.stub().placeOrder(valid().setOrderDate("2026-02-30").build()), "order_date"),
        bad("negative total", () -> orders.stub().placeOrder(valid().setTotal(eur(-1, 0)).build()), "total"),
        bad("negative nanos", () -> orders.stub().placeOrder(valid().setTotal(eur(0, -5)).build()), "total"),
        bad("malformed currency", () -> orders.stub().placeOrder(valid()
            .setTotal(Money.newBuilder().setCurrencyCode("euro").setUnits(1)).build()), "total.currency_code"),
        bad("nanos out of range", () -> orders.stub().placeOrder(valid().setTotal(eur(1, 1_000_000_000)).build()),
            "total.nanos"),
        bad("missing lines and request id", () -> orders.stub().placeOrder(valid().clearLines().clearTotal()
            .setRequestId("").build()), "lines", "request_id"),
        bad("zero quantity, no unit price", () -> orders.stub().placeOrder(valid().clearTotal().setLines(0,
            OrderLine.newBuilder().setProductId("P1").setWarehouseId("W1")).build()),
            "lines[0].quantity", "lines[0].unit_price"),
        bad("key delimiter in a line's product", () -> orders.stub().placeOrder(valid().clearTotal()
            .setLines(0, line("P#1", "W1", 1, eur(1, 0))).build()), "lines[0].product_id"),
        bad("two currencies", () -> orders.stub().placeOrder(valid().clearTotal().addLines(line("P2", "W1", 1,
            Money.newBuilder().setCurrencyCode("USD").setUnits(1).build())).build()), "lines[1].unit_price.currency_code"),
        bad("one stock at two prices", () -> orders.stub().placeOrder(valid().clearTotal()
            .addLines(line("P1", "W1", 1, eur(6, 0))).build()), "lines[1].unit_price"),
        bad("a total that is not the lines'", () -> orders.stub().placeOrder(valid().setTotal(eur(11, 0)).build()), "total"),
        bad("34 lines after merging", () -> orders.stub().placeOrder(valid().clearTotal().clearLines()
            .addAllLines(java.util.stream.IntStream.range(0, 35).mapToObj(i -> line("P" + (i % 34), "W1", 1, eur(1, 0)))
                .toList()).build()), "lines"),
        // Each line within 10^9, merged past it: the inventory would refuse the hold, and the order would sit PENDING.
        bad("two lines of one stock, 1.2 * 10^9 units merged", () -> orders.stub().placeOrder(valid().clearTotal().clearLines()
            .addLines(line("P1", "W1", 600_000_000, eur(1, 0))).addLines(line("P1", "W1", 600_000_000, eur(1, 0)))
            .build()), "lines"),
        bad("control character in order id", () -> orders.stub().getOrder(
            GetOrderRequest.newBuilder().setOrderId("O\u00001").build()), "order_id"),
        bad("prefix with range", () -> orders.stub().listCustomerOrders(list().setDatePrefix("2026")
            .setStartDate("2026-01-01").build()), "date_prefix"),
        bad("impossible prefix", () -> orders.stub().listCustomerOrders(list().setDatePrefix("2026-13").build()),
            "date_prefix"),
        bad("malformed prefix", () -> orders.stub().listCustomerOrders(list().setDatePrefix("2026-7").build()),
            "date_prefix"),
        bad("reversed range", () -> orders.stub().listCustomerOrders(list().setStartDate("2026-07-26")
            .setEndDate("2026-07-01").build()), "end_date"),
        bad("impossible range end", () -> orders.stub().listCustomerOrders(list().setEndDate("2026-04-31").build()),
            "end_date"),
        bad("negative page size", () -> orders.stub().listCustomerOrders(list().setPageSize(-5).build()), "page_size"),
        bad("tampered token", () -> orders.stub().listCustomerOrders(list().setPageToken("AQID").build()), "page_token"),
        bad("unknown status", () -> orders.stub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder()
            .setOrderId("O1").setStatusValue(42).build()), "status"),
        bad("missing status, negative version", () -> orders.stub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder()
            .setOrderId("O1").setExpectedVersion(-1).build()), "status", "expected_version"));
  }

  private static Arguments bad(String name, ThrowingCallable call, String... fields) {
    return Arguments.of(name, call, fields);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badRequests")
  void badInput_isInvalidArgument_namingEachField_andTouchesNoData(String name, ThrowingCallable call, String[] fields) {
    assertInvalid(call, fields);
    assertThat(orders.recorder.requests()).as("DynamoDB requests made for an invalid call").isEmpty();
  }
}
