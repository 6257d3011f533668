package dev.warehouse.order;

import static dev.warehouse.order.OrderFixture.id;
import static dev.warehouse.order.OrderFixture.order;
import static dev.warehouse.testing.Statuses.assertInvalid;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.ListCustomerOrdersResponse;
import dev.warehouse.order.v1.Order;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A5: a customer's orders, newest first, by date prefix or inclusive range, paged. */
@Tag("integration")
class OrderListTest {

  private static OrderFixture orders;
  private static String customer;

  @BeforeAll
  static void start() throws Exception {
    orders = new OrderFixture();
    customer = id("C");
    orders.stub().placeOrder(order(customer, "O711", "2026-06-18").build());
    orders.stub().placeOrder(order(customer, "O844", "2026-07-21").build());
    orders.stub().placeOrder(order(customer, "O900", "2026-07-26").build());
    orders.stub().placeOrder(order(customer, "O950", "2025-12-31").build());
    // Another customer's order on the same day must never show up.
    orders.stub().placeOrder(order(customer + "x", id("O"), "2026-07-26").build());
  }

  @AfterAll
  static void stop() throws Exception {
    orders.close();
  }

  private static List<String> ids(ListCustomerOrdersRequest.Builder request) {
    ListCustomerOrdersResponse response = orders.stub().listCustomerOrders(request.setCustomerId(customer).setConsistentRead(true).build());
    assertThat(response.getNextPageToken()).isEmpty();
    return response.getOrdersList().stream().map(Order::getOrderId).toList();
  }

  @Test
  void listsNewestFirst() {
    assertThat(ids(ListCustomerOrdersRequest.newBuilder())).containsExactly("O900", "O844", "O711", "O950");
  }

  @Test
  void filtersByDatePrefix_yearMonthOrDay() {
    assertThat(ids(ListCustomerOrdersRequest.newBuilder().setDatePrefix("2026"))).containsExactly("O900", "O844", "O711");
    assertThat(ids(ListCustomerOrdersRequest.newBuilder().setDatePrefix("2026-07"))).containsExactly("O900", "O844");
    assertThat(ids(ListCustomerOrdersRequest.newBuilder().setDatePrefix("2026-07-26"))).containsExactly("O900");
    assertThat(ids(ListCustomerOrdersRequest.newBuilder().setDatePrefix("2024"))).isEmpty();
  }

  @Test
  void filtersByInclusiveRange_eitherEndMayBeOpen() {
    assertThat(ids(ListCustomerOrdersRequest.newBuilder().setStartDate("2026-06-18").setEndDate("2026-07-21")))
        .containsExactly("O844", "O711");
    assertThat(ids(ListCustomerOrdersRequest.newBuilder().setStartDate("2026-07-21"))).containsExactly("O900", "O844");
    assertThat(ids(ListCustomerOrdersRequest.newBuilder().setEndDate("2026-06-18"))).containsExactly("O711", "O950");
  }

  @Test
  void pagesThroughEveryOrder_andTokensAreBoundToTheirFilter() {
    List<String> seen = new ArrayList<>();
    String token = "";
    int calls = 0;
    do {
      ListCustomerOrdersResponse page = orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
          .setCustomerId(customer).setPageSize(1).setPageToken(token).setConsistentRead(true).build());
      page.getOrdersList().forEach(o -> seen.add(o.getOrderId()));
      token = page.getNextPageToken();
      calls++;
    } while (!token.isEmpty() && calls < 10);
    assertThat(seen).containsExactly("O900", "O844", "O711", "O950");
    assertThat(calls).isEqualTo(4);

    String firstPageToken = orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
        .setCustomerId(customer).setPageSize(1).setConsistentRead(true).build()).getNextPageToken();
    assertInvalid(() -> orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
        .setCustomerId(customer).setDatePrefix("2026").setPageToken(firstPageToken).build()), "page_token");
    assertInvalid(() -> orders.stub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
        .setCustomerId(customer + "x").setPageToken(firstPageToken).build()), "page_token");
  }
}
