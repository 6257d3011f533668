package dev.warehouse.order.store;

import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_PK;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_SK;

import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.domain.PendingStep;
import dev.warehouse.order.domain.Rejection;
import dev.warehouse.order.domain.Shortage;
import dev.warehouse.order.domain.StockStep;
import dev.warehouse.runtime.dynamo.Timestamps;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Maps orders to their two items and back. Both copies carry the same order attributes, so either
 * answers its request alone; only their keys (and {@code entity}) differ, and what only A6 needs lives on
 * the direct copy alone: the lines, a rejection's shortages, and the stock step the order still owes
 * (with the sparse GSI1 keys that list it for the recovery, A10).
 *
 * <p>Item size: a line is at most about 220 bytes (two 64-character IDs, three numbers and their
 * attribute names), so 33 lines take about 7 KB of the direct copy's 400 KB; the customer copy stays as
 * small as before, so a page of A5 costs what it did.
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
  static final String LINE_COUNT = "line_count";
  static final String REJECTION_REASON = "rejection_reason";
  // The direct copy only:
  static final String LINES = "lines";
  static final String SHORTAGES = "shortages";
  static final String STEP = "stock_step";
  static final String STEP_DUE = "stock_step_due";
  // A line's and a shortage's attributes: short, since a line is repeated up to 33 times.
  private static final String PRODUCT = "p";
  private static final String WAREHOUSE = "w";
  private static final String QUANTITY = "q";
  private static final String PRICE_UNITS = "u";
  private static final String PRICE_NANOS = "n";
  private static final String AVAILABLE = "a";

  /** The direct copy's entity name. */
  public static final String DIRECT_COPY = "Order";
  /** The customer-corridor copy's entity name. */
  public static final String CORRIDOR_COPY = "CustomerOrder";

  /** The attributes both copies must agree on (the consistency audit compares these). */
  public static final List<String> SHARED_ATTRIBUTES = List.of(ORDER_ID, CUSTOMER_ID, ORDER_DATE, STATUS,
      TOTAL_CURRENCY, TOTAL_UNITS, TOTAL_NANOS, VERSION, CREATE_TIME, UPDATE_TIME, LINE_COUNT, REJECTION_REASON);

  private OrderItems() {}

  public static Map<String, AttributeValue> directKey(String orderId) {
    return OrderKeys.direct(orderId).attributes();
  }

  public static Map<String, AttributeValue> corridorKey(String customerId, LocalDate orderDate, String orderId) {
    return OrderKeys.corridor(customerId, orderDate, orderId).attributes();
  }

  public static Map<String, AttributeValue> directItem(Order order) {
    Map<String, AttributeValue> attrs = item(directKey(order.orderId()), DIRECT_COPY, order);
    attrs.put(LINES, AttributeValue.fromL(order.lines().stream().map(OrderItems::line).toList()));
    attrs.putAll(directOnly(order));
    return attrs;
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
    attrs.put(TOTAL_CURRENCY, AttributeValue.fromS(order.total().currencyCode()));
    attrs.put(TOTAL_UNITS, AttributeValue.fromN(Long.toString(order.total().units())));
    attrs.put(TOTAL_NANOS, AttributeValue.fromN(Integer.toString(order.total().nanos())));
    attrs.put(CREATE_TIME, AttributeValue.fromS(order.createTime().toString()));
    attrs.put(LINE_COUNT, AttributeValue.fromN(Integer.toString(order.lineCount())));
    attrs.putAll(changing(order));
    return attrs;
  }

  /** What a change of status sets on both copies: status, version, update time, and a rejection's reason. */
  static Map<String, AttributeValue> changing(Order order) {
    Map<String, AttributeValue> attrs = new HashMap<>();
    attrs.put(STATUS, AttributeValue.fromS(order.status().name()));
    attrs.put(VERSION, AttributeValue.fromN(Long.toString(order.version())));
    attrs.put(UPDATE_TIME, AttributeValue.fromS(order.updateTime().toString()));
    order.rejection().ifPresent(r -> attrs.put(REJECTION_REASON, AttributeValue.fromS(r.reason())));
    return attrs;
  }

  /**
   * What only the direct copy carries besides its lines: a rejection's shortages, and the step the order
   * owes with its A10 entry (GSI1 keys; absent, the order is in no shard of the index).
   */
  static Map<String, AttributeValue> directOnly(Order order) {
    Map<String, AttributeValue> attrs = new HashMap<>();
    order.rejection().ifPresent(r -> attrs.put(SHORTAGES,
        AttributeValue.fromL(r.shortages().stream().map(OrderItems::shortage).toList())));
    order.pending().ifPresent(p -> {
      attrs.put(STEP, AttributeValue.fromS(p.step().name()));
      attrs.put(STEP_DUE, AttributeValue.fromS(p.due().toString()));
      attrs.put(GSI1_PK, AttributeValue.fromS(OrderKeys.stepPk(order.orderId())));
      attrs.put(GSI1_SK, AttributeValue.fromS(OrderKeys.stepSk(p.due(), order.orderId())));
    });
    return attrs;
  }

  /** The attributes of the direct copy that hold a pending step, which a done step removes. */
  static List<String> stepAttributes() {
    return List.of(STEP, STEP_DUE, GSI1_PK, GSI1_SK);
  }

  private static AttributeValue line(OrderLine line) {
    return AttributeValue.fromM(Map.of(
        PRODUCT, AttributeValue.fromS(line.productId()),
        WAREHOUSE, AttributeValue.fromS(line.warehouseId()),
        QUANTITY, AttributeValue.fromN(Long.toString(line.quantity())),
        PRICE_UNITS, AttributeValue.fromN(Long.toString(line.unitPrice().units())),
        PRICE_NANOS, AttributeValue.fromN(Integer.toString(line.unitPrice().nanos()))));
  }

  private static AttributeValue shortage(Shortage shortage) {
    return AttributeValue.fromM(Map.of(
        PRODUCT, AttributeValue.fromS(shortage.productId()),
        WAREHOUSE, AttributeValue.fromS(shortage.warehouseId()),
        QUANTITY, AttributeValue.fromN(Long.toString(shortage.requested())),
        AVAILABLE, AttributeValue.fromN(Long.toString(shortage.available()))));
  }

  /** The order an item of either copy holds (the consistency audit reads the direct copy's lines and step). */
  public static Order order(Map<String, AttributeValue> item) {
    return toOrder(item);
  }

  /** Either copy: the customer copy has no lines, shortages or step (A5 lists summaries). */
  static Order toOrder(Map<String, AttributeValue> attrs) {
    String currency = attrs.get(TOTAL_CURRENCY).s();
    List<OrderLine> lines = new ArrayList<>();
    if (attrs.containsKey(LINES)) {
      for (AttributeValue value : attrs.get(LINES).l()) {
        Map<String, AttributeValue> l = value.m();
        lines.add(new OrderLine(l.get(PRODUCT).s(), l.get(WAREHOUSE).s(), Long.parseLong(l.get(QUANTITY).n()),
            new Money(currency, Long.parseLong(l.get(PRICE_UNITS).n()), Integer.parseInt(l.get(PRICE_NANOS).n()))));
      }
    }
    Optional<Rejection> rejection = Optional.ofNullable(attrs.get(REJECTION_REASON)).map(reason -> {
      List<Shortage> shortages = new ArrayList<>();
      if (attrs.containsKey(SHORTAGES)) {
        for (AttributeValue value : attrs.get(SHORTAGES).l()) {
          Map<String, AttributeValue> s = value.m();
          shortages.add(new Shortage(s.get(PRODUCT).s(), s.get(WAREHOUSE).s(), Long.parseLong(s.get(QUANTITY).n()),
              Long.parseLong(s.get(AVAILABLE).n())));
        }
      }
      return new Rejection(reason.s(), shortages);
    });
    Optional<PendingStep> pending = attrs.containsKey(STEP)
        ? Optional.of(new PendingStep(StockStep.valueOf(attrs.get(STEP).s()), Timestamps.parse(attrs.get(STEP_DUE).s())))
        : Optional.empty();
    AttributeValue lineCount = attrs.get(LINE_COUNT);
    return new Order(
        attrs.get(ORDER_ID).s(),
        attrs.get(CUSTOMER_ID).s(),
        LocalDate.parse(attrs.get(ORDER_DATE).s()),
        OrderStatus.valueOf(attrs.get(STATUS).s()),
        new Money(currency, Long.parseLong(attrs.get(TOTAL_UNITS).n()), Integer.parseInt(attrs.get(TOTAL_NANOS).n())),
        Long.parseLong(attrs.get(VERSION).n()),
        Timestamps.parse(attrs.get(CREATE_TIME).s()),
        Timestamps.parse(attrs.get(UPDATE_TIME).s()),
        lines,
        lineCount == null ? 0 : Integer.parseInt(lineCount.n()), // orders from before lines existed
        rejection,
        pending);
  }
}
