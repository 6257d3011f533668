package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.id;
import static dev.warehouse.order.OrderFixture.order;
import static dev.warehouse.testing.Statuses.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import io.grpc.Status;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** UpdateOrderStatus: valid transitions only, both copies at once, conditioned on the version. */
@Tag("integration")
class OrderStatusTest {

  private static OrderFixture orders;

  @BeforeAll
  static void start() throws Exception {
    orders = new OrderFixture();
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      assertThat(orders.audit().findings()).isEmpty();
    } finally {
      orders.close();
    }
  }

  private static Order move(String orderId, OrderStatus status, long expectedVersion) {
    return orders.stub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder()
        .setOrderId(orderId).setStatus(status).setExpectedVersion(expectedVersion).build());
  }

  private static Order both(String customerId, String orderId) {
    Order direct = orders.stub().getOrder(GetOrderRequest.newBuilder().setOrderId(orderId).setConsistentRead(true).build());
    Order corridor = orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
        .setCustomerId(customerId).setConsistentRead(true).build()).getOrders(0);
    assertThat(corridor).as("the customer's copy agrees with the direct copy").isEqualTo(OrderFixture.summary(direct));
    return direct;
  }

  @Test
  void walksTheLifeCycle_updatingBothCopies() {
    String customer = id("C");
    String orderId = orders.stub().placeOrder(order(customer, id("O"), "2026-07-26").build()).getOrderId();
    assertThat(move(orderId, OrderStatus.ORDER_STATUS_PAID, 1).getVersion()).isEqualTo(2);
    assertThat(move(orderId, OrderStatus.ORDER_STATUS_SHIPPED, 0).getVersion()).isEqualTo(3);
    Order delivered = move(orderId, OrderStatus.ORDER_STATUS_DELIVERED, 3);
    assertThat(delivered.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_DELIVERED);
    assertThat(both(customer, orderId)).isEqualTo(delivered);
  }

  @Test
  void cancelsFromPlacedOrPaid_only() {
    String placed = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    assertThat(move(placed, OrderStatus.ORDER_STATUS_CANCELLED, 0).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_CANCELLED);
    String paid = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    move(paid, OrderStatus.ORDER_STATUS_PAID, 0);
    assertThat(move(paid, OrderStatus.ORDER_STATUS_CANCELLED, 0).getVersion()).isEqualTo(3);
    String shipped = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    move(shipped, OrderStatus.ORDER_STATUS_PAID, 0);
    move(shipped, OrderStatus.ORDER_STATUS_SHIPPED, 0);
    assertStatus(() -> move(shipped, OrderStatus.ORDER_STATUS_CANCELLED, 0),
        Status.Code.FAILED_PRECONDITION, "INVALID_STATUS_TRANSITION");
  }

  @Test
  void refusesAnInvalidTransition_andWritesNothing() {
    String customer = id("C");
    String orderId = orders.stub().placeOrder(order(customer, id("O"), "2026-07-26").build()).getOrderId();
    assertStatus(() -> move(orderId, OrderStatus.ORDER_STATUS_SHIPPED, 0),
        Status.Code.FAILED_PRECONDITION, "INVALID_STATUS_TRANSITION");
    assertStatus(() -> move(orderId, OrderStatus.ORDER_STATUS_DELIVERED, 0),
        Status.Code.FAILED_PRECONDITION, "INVALID_STATUS_TRANSITION");
    Order unchanged = both(customer, orderId);
    assertThat(unchanged.getVersion()).isEqualTo(1);
    assertThat(unchanged.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
  }

  @Test
  void isAborted_whenExpectedVersionIsStale() {
    String orderId = orders.stub().placeOrder(order(id("C"), id("O"), "2026-07-26").build()).getOrderId();
    move(orderId, OrderStatus.ORDER_STATUS_PAID, 1);
    assertStatus(() -> move(orderId, OrderStatus.ORDER_STATUS_SHIPPED, 1), Status.Code.ABORTED, "VERSION_MISMATCH");
  }

  @Test
  void aChangeThatAlreadyHappened_answersTheOrderAsItIs_whateverVersionItExpected() {
    String customer = id("C");
    String orderId = orders.stub().placeOrder(order(customer, id("O"), "2026-07-26").build()).getOrderId();
    assertThat(move(orderId, OrderStatus.ORDER_STATUS_PLACED, 0).getVersion()).as("placed already: nothing written")
        .isEqualTo(1);
    Order paid = move(orderId, OrderStatus.ORDER_STATUS_PAID, 1);
    // The caller's retry of the same change, its answer lost: the version it expected has moved on.
    Order again = move(orderId, OrderStatus.ORDER_STATUS_PAID, 1);
    assertThat(again.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PAID);
    assertThat(again.getVersion()).isEqualTo(paid.getVersion()).isEqualTo(2);
    assertThat(both(customer, orderId).getVersion()).isEqualTo(2);
  }

  @Test
  void isNotFound_forAnUnknownOrder() {
    assertStatus(() -> move(id("O"), OrderStatus.ORDER_STATUS_PAID, 0), Status.Code.NOT_FOUND, "ORDER_NOT_FOUND");
  }
}
