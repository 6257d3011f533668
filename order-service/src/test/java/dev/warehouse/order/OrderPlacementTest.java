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
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.LocalDate;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** PlaceOrder and GetOrder: two copies in one transaction, idempotent per request id. */
@Tag("integration")
class OrderPlacementTest {

  private static OrderFixture orders;

  @BeforeAll
  static void start() throws Exception {
    orders = new OrderFixture();
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      assertThat(orders.audit().findings()).as("orders whose copies disagree").isEmpty();
    } finally {
      orders.close();
    }
  }

  @Test
  void placeOrder_storesBothCopies_readableByIdAndByCustomer() {
    String customer = id("C");
    Order placed = orders.stub().placeOrder(order(customer, "O900", "2026-07-26").build());
    assertThat(placed.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
    assertThat(placed.getVersion()).isEqualTo(1);
    assertThat(placed.getTotal().getUnits()).isEqualTo(42);
    assertThat(placed.getTotal().getNanos()).isEqualTo(500_000_000);

    Order byId = orders.stub().getOrder(GetOrderRequest.newBuilder().setOrderId("O900").setConsistentRead(true).build());
    assertThat(byId).isEqualTo(placed);
    assertThat(orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId(customer)
        .setConsistentRead(true).build()).getOrdersList()).containsExactly(OrderFixture.summary(placed));
  }

  @Test
  void placeOrder_fillsInOrderIdAndTodaysDate_whenEmpty() {
    Order placed = orders.stub().placeOrder(PlaceOrderRequest.newBuilder().setCustomerId(id("C"))
        .addLines(OrderFixture.line(OrderFixture.PRODUCT, OrderFixture.WAREHOUSE, 1, OrderFixture.eur(5, 0)))
        .setRequestId(id("req")).build());
    assertThat(placed.getOrderId()).isNotEmpty();
    assertThat(placed.getOrderDate()).isEqualTo(LocalDate.now(ZoneOffset.UTC).toString());
  }

  @Test
  void getOrder_isNotFound_forAnUnknownId() {
    assertStatus(() -> orders.stub().getOrder(GetOrderRequest.newBuilder().setOrderId(id("O")).build()),
        Status.Code.NOT_FOUND, "ORDER_NOT_FOUND");
  }

  @Test
  void placeOrder_returnsSameOrder_whenRequestIdReplayed_evenWithAGeneratedId() {
    String customer = id("C");
    PlaceOrderRequest request = PlaceOrderRequest.newBuilder().setCustomerId(customer)
        .addLines(OrderFixture.line(OrderFixture.PRODUCT, OrderFixture.WAREHOUSE, 2, OrderFixture.eur(5, 0)))
        .setRequestId(id("req")).build();
    Order first = orders.stub().placeOrder(request);
    // moto ignores ClientRequestToken, so this replay is answered by our request record alone: the
    // same path that serves a retry hours later, past DynamoDB's 10-minute token window.
    Order replay = orders.stub().placeOrder(request);
    assertThat(replay).isEqualTo(first);
    assertThat(orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId(customer)
        .setConsistentRead(true).build()).getOrdersCount()).isEqualTo(1);
  }

  @Test
  void placeOrder_isAlreadyExists_forAnExistingOrderId_namingTheCopy() {
    String orderId = id("O");
    orders.stub().placeOrder(order(id("C"), orderId, "2026-07-21").build());
    StatusRuntimeException e = failure(() -> orders.stub().placeOrder(order(id("C"), orderId, "2026-07-22").build()));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
    assertThat(e.getStatus().getDescription()).contains("direct copy").contains(orderId);
  }

  @Test
  void placeOrder_isAlreadyExists_whenRequestIdReusedForAnotherOrder() {
    String customer = id("C");
    PlaceOrderRequest first = order(customer, id("O"), "2026-06-18").build();
    orders.stub().placeOrder(first);
    assertStatus(() -> orders.stub().placeOrder(first.toBuilder().setOrderId(id("O")).build()),
        Status.Code.ALREADY_EXISTS, "REQUEST_ID_REUSED");
  }
}
