package dev.warehouse.order.store;

import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.runtime.dynamo.DeclaredKey;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;
import java.time.LocalDate;

/**
 * Every key of the order aggregate, one named function each. The order-service owns the
 * {@code CUSTOMER#} and {@code ORDER#} prefixes; IDs never contain {@code #} (validated before they
 * get here). Each function renders the templates the routes on the RPCs of
 * {@code warehouse.order.v1.OrderService} declare: it only types the values, and completes what a
 * route declares as a prefix only (a date range, a step entry's due time). {@code OrderKeysTest}
 * renders each route's templates by field name and compares.
 */
public final class OrderKeys {

  public static final RouteTable ROUTES = RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService"));

  public static final Route PLACE_ORDER = ROUTES.route("PlaceOrder");
  public static final Route ORDER_BY_ID = ROUTES.route("GetOrder");
  public static final Route ORDERS_OF_CUSTOMER = ROUTES.route("ListCustomerOrders");
  public static final Route UPDATE_STATUS = ROUTES.route("UpdateOrderStatus");
  public static final Route STALLED_ORDERS = ROUTES.route("ListStalledOrders");
  /** A10's write shards: an order's step entry is in the shard of its order id. */
  public static final Route.FanOut STEP_SHARDS = STALLED_ORDERS.fanOut().orElseThrow();

  // The keys as the routes declare them, picked by the fields they need: their text is in proto/ only.
  private static final DeclaredKey DIRECT_KEY = DeclaredKey.of(ORDER_BY_ID, "order_id");
  private static final DeclaredKey CORRIDOR_KEY = DeclaredKey.of(PLACE_ORDER, "customer_id", "order_date", "order_id");
  private static final DeclaredKey REQUEST_KEY = DeclaredKey.of(PLACE_ORDER, "customer_id", "request_id");
  /** Due times in step entries: fixed width, so that they sort as they compare. */
  private static final java.time.format.DateTimeFormatter DUE_TIME =
      java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(java.time.ZoneOffset.UTC);
  /** Sorts after every character an ID may hold, so it closes a range over a whole day. */
  private static final String AFTER_ANY_ID = "~";

  private OrderKeys() {}

  /** A6, W4, W5: the direct copy, {@code ORDER#id / METADATA}. */
  public static TableKey direct(String orderId) {
    return DIRECT_KEY.render(orderId);
  }

  /** A5, W4, W5: the customer copy, {@code CUSTOMER#c / ORDER#yyyy-mm-dd#id}: dates sort, newest last. */
  public static TableKey corridor(String customerId, LocalDate orderDate, String orderId) {
    return CORRIDOR_KEY.render(customerId, orderDate.toString(), orderId);
  }

  /** W4: a PlaceOrder request record, {@code CUSTOMER#c / REQUEST#id}, in the customer's partition. */
  public static TableKey orderRequest(String customerId, String requestId) {
    return REQUEST_KEY.render(customerId, requestId);
  }

  /** A5: the customer's corridor, {@code CUSTOMER#c}. */
  public static String customerPk(String customerId) {
    return ORDERS_OF_CUSTOMER.partitionKey().render(customerId);
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

  /** A10: the GSI1 partition of one shard of step entries, {@code ORDER_TASKS#07}. */
  public static String stepShardPk(int shard) {
    return STALLED_ORDERS.partitionKey().render(Route.FanOut.shardValue(shard));
  }

  /** A10: the GSI1 partition of {@code orderId}'s step entry. */
  public static String stepPk(String orderId) {
    return stepShardPk(STEP_SHARDS.shardOf(orderId));
  }

  /** A10: the GSI1 sort key of a step entry due at {@code due}: {@code DUE#2026-12-04T05:00:00.000Z#O-1}. */
  public static String stepSk(java.time.Instant due, String orderId) {
    return stepsFrom() + DUE_TIME.format(due) + "#" + orderId;
  }

  /** A10: the lowest GSI1 sort key of a step entry. */
  public static String stepsFrom() {
    return STALLED_ORDERS.sortKey().prefix();
  }

  /** A10: above every step entry due at or before {@code now}. */
  public static String stepsDueBy(java.time.Instant now) {
    return stepsFrom() + DUE_TIME.format(now) + "#" + AFTER_ANY_ID;
  }
}
