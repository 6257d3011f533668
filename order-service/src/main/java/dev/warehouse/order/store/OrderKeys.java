package dev.warehouse.order.store;

import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;
import java.time.LocalDate;

/**
 * Every key of the order aggregate, built from the routes declared on the RPCs of
 * {@code warehouse.order.v1.OrderService}. The order-service owns the {@code CUSTOMER#} and
 * {@code ORDER#} prefixes. IDs never contain {@code #} (validated before they get here).
 */
public final class OrderKeys {

  public static final RouteTable ROUTES = RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService"));

  public static final Route PLACE_ORDER = ROUTES.route("PlaceOrder");
  public static final Route ORDER_BY_ID = ROUTES.route("GetOrder");
  public static final Route ORDERS_OF_CUSTOMER = ROUTES.route("ListCustomerOrders");
  public static final Route UPDATE_STATUS = ROUTES.route("UpdateOrderStatus");

  /** Sorts after every character an ID may hold, so it closes a range over a whole day. */
  private static final String AFTER_ANY_ID = "~";

  private OrderKeys() {}

  /** A5, W4: the customer's corridor, {@code CUSTOMER#c}. */
  public static String customerPk(String customerId) {
    return ORDERS_OF_CUSTOMER.partitionKey().render(customerId);
  }

  /** W4: the corridor copy's sort key, {@code ORDER#yyyy-mm-dd#id}: dates sort, newest last. */
  public static String corridorSk(LocalDate orderDate, String orderId) {
    return PLACE_ORDER.sortKey().render(orderDate.toString(), orderId);
  }

  /** A5: the corridor's sort-key prefix, {@code ORDER#}, followed by a date prefix when filtering. */
  public static String corridorPrefix(String datePrefix) {
    return ORDERS_OF_CUSTOMER.sortKey().prefix() + datePrefix;
  }

  /** A5: the lowest sort key of orders dated {@code start} or later. */
  public static String corridorFrom(LocalDate start) {
    return corridorPrefix(start.toString());
  }

  /** A5: the highest sort key of orders dated {@code end} or earlier. */
  public static String corridorUntil(LocalDate end) {
    return corridorPrefix(end.toString()) + "#" + AFTER_ANY_ID;
  }

  /** A5: above every corridor key (an open-ended range). */
  public static String corridorEnd() {
    return corridorPrefix(AFTER_ANY_ID);
  }

  /** A6: the direct copy, {@code ORDER#id}. */
  public static String orderPk(String orderId) {
    return ORDER_BY_ID.partitionKey().render(orderId);
  }

  /** A6: {@code METADATA}. */
  public static String metadataSk() {
    return ORDER_BY_ID.sortKey().render();
  }

  /** W4: the PlaceOrder request record's sort key, {@code REQUEST#id}, in the customer's partition. */
  public static String requestSk(String requestId) {
    return PLACE_ORDER.alsoWrites().get(1).sortKey().render(requestId);
  }
}
