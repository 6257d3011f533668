package dev.warehouse.order.store;

import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.runtime.dynamo.Timestamps;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Maps orders to their two items and back. Both copies carry the same order attributes, so either
 * answers its request alone; only their keys (and {@code entity}) differ.
 */
public final class OrderItems {

  static final String ENTITY = "entity";
  static final String ORDER_ID = "order_id";
  static final String CUSTOMER_ID = "customer_id";
  static final String ORDER_DATE = "order_date";
  static final String STATUS = "status";
  static final String TOTAL_CURRENCY = "total_currency";
  static final String TOTAL_UNITS = "total_units";
  static final String TOTAL_NANOS = "total_nanos";
  static final String VERSION = "version";
  static final String CREATE_TIME = "create_time";
  static final String UPDATE_TIME = "update_time";
  static final String FINGERPRINT = "fingerprint";

  /** The direct copy's entity name. */
  public static final String DIRECT_COPY = "Order";
  /** The customer-corridor copy's entity name. */
  public static final String CORRIDOR_COPY = "CustomerOrder";

  /** The attributes both copies must agree on (the consistency audit compares these). */
  public static final List<String> SHARED_ATTRIBUTES = List.of(
      ORDER_ID, CUSTOMER_ID, ORDER_DATE, STATUS, TOTAL_CURRENCY, TOTAL_UNITS, TOTAL_NANOS, VERSION, CREATE_TIME, UPDATE_TIME);

  private OrderItems() {}

  public static Map<String, AttributeValue> directKey(String orderId) {
    return OrderKeys.direct(orderId).attributes();
  }

  public static Map<String, AttributeValue> corridorKey(String customerId, LocalDate orderDate, String orderId) {
    return OrderKeys.corridor(customerId, orderDate, orderId).attributes();
  }

  public static Map<String, AttributeValue> directItem(Order order) {
    return item(directKey(order.orderId()), DIRECT_COPY, order);
  }

  public static Map<String, AttributeValue> corridorItem(Order order) {
    return item(corridorKey(order.customerId(), order.orderDate(), order.orderId()), CORRIDOR_COPY, order);
  }

  private static Map<String, AttributeValue> item(Map<String, AttributeValue> key, String entity, Order order) {
    Map<String, AttributeValue> attrs = new HashMap<>(key);
    attrs.put(ENTITY, AttributeValue.fromS(entity));
    attrs.put(ORDER_ID, AttributeValue.fromS(order.orderId()));
    attrs.put(CUSTOMER_ID, AttributeValue.fromS(order.customerId()));
    attrs.put(ORDER_DATE, AttributeValue.fromS(order.orderDate().toString()));
    attrs.put(STATUS, AttributeValue.fromS(order.status().name()));
    attrs.put(TOTAL_CURRENCY, AttributeValue.fromS(order.total().currencyCode()));
    attrs.put(TOTAL_UNITS, AttributeValue.fromN(Long.toString(order.total().units())));
    attrs.put(TOTAL_NANOS, AttributeValue.fromN(Integer.toString(order.total().nanos())));
    attrs.put(VERSION, AttributeValue.fromN(Long.toString(order.version())));
    attrs.put(CREATE_TIME, AttributeValue.fromS(order.createTime().toString()));
    attrs.put(UPDATE_TIME, AttributeValue.fromS(order.updateTime().toString()));
    return attrs;
  }

  static Order toOrder(Map<String, AttributeValue> attrs) {
    return new Order(
        attrs.get(ORDER_ID).s(),
        attrs.get(CUSTOMER_ID).s(),
        LocalDate.parse(attrs.get(ORDER_DATE).s()),
        OrderStatus.valueOf(attrs.get(STATUS).s()),
        new Money(attrs.get(TOTAL_CURRENCY).s(), Long.parseLong(attrs.get(TOTAL_UNITS).n()),
            Integer.parseInt(attrs.get(TOTAL_NANOS).n())),
        Long.parseLong(attrs.get(VERSION).n()),
        Timestamps.parse(attrs.get(CREATE_TIME).s()),
        Timestamps.parse(attrs.get(UPDATE_TIME).s()));
  }
}
