package dev.warehouse.order.audit;

import dev.warehouse.inventory.v1.ReservationServiceProto;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.domain.PendingStep;
import dev.warehouse.order.domain.StockStep;
import dev.warehouse.order.store.OrderItems;
import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.Finding;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.dynamo.DeclaredKey;
import dev.warehouse.runtime.routing.RouteTable;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The consistency audit of orders: an admin tool, off the request path, that walks every order and
 * reports each order whose two copies disagree or lack one another. It scans the table in parallel
 * segments, paced by a rate limiter ({@link PacedScan}), and for each page of copies batch-reads their
 * twins. A disagreement is read again, strongly, before it is reported, so an update landing mid-audit
 * is not a finding. Findings: {@code MISSING_CUSTOMER_COPY}, {@code MISSING_DIRECT_COPY},
 * {@code COPIES_DISAGREE}.
 *
 * <p>It also checks, for every order with lines (which buys its stock), the inventory's reservation of
 * that order ({@code RESERVATION#{order_id} / METADATA}, at most one per order by its key), read with
 * the same batch reads; it never writes one:
 * <ul>
 *   <li>a PLACED or PAID order has a CONFIRMED reservation, a SHIPPED or DELIVERED one a COMMITTED
 *       reservation (or CONFIRMED while its COMMIT step is owed), with the order's lines (quantities per
 *       product and warehouse): else {@code MISSING_RESERVATION}, {@code RESERVATION_STATE_MISMATCH} or
 *       {@code RESERVATION_LINES_DISAGREE};
 *   <li>a CANCELLED or REJECTED order has a RELEASED reservation or none, unless its RELEASE step is still
 *       owed and not yet due plus one recovery period: else {@code RESERVATION_NOT_RELEASED};
 *   <li>no order owes a stock step past its due time plus one recovery period (by then the recovery
 *       should have finished it): else {@code STOCK_STEP_OVERDUE}. A PENDING order is checked only for this.
 * </ul>
 * A direct copy that cannot be read as an order is {@code UNREADABLE_ORDER}.
 * An order and its reservation move in turn (the order records the step it owes before the inventory
 * acts), so a suspect pair is read again, strongly: the order, its reservation, the order again; an
 * order that changed meanwhile is being worked on and is not a finding.
 */
public final class OrderAudit {

  /** The inventory's reservation item: the key its GetReservation route declares. */
  private static final DeclaredKey RESERVATION = DeclaredKey.of(RouteTable.of(
      ReservationServiceProto.getDescriptor().findServiceByName("ReservationService")).route("GetReservation"), "order_id");
  private static final Set<OrderStatus> HOLDING = Set.of(OrderStatus.PLACED, OrderStatus.PAID);
  private static final Set<OrderStatus> SHIPPED = Set.of(OrderStatus.SHIPPED, OrderStatus.DELIVERED);
  private static final Set<OrderStatus> ENDED = Set.of(OrderStatus.CANCELLED, OrderStatus.REJECTED);

  private final PacedScan scan;
  private final Clock clock;
  private final Duration recoveryPeriod;

  /**
   * @param recoveryPeriod the order-service's {@code ORDER_RECOVERY_SECONDS}: a step is reported once it is
   *                       this long past due (0, the recovery off: once it is past due)
   */
  public OrderAudit(PacedScan scan, Clock clock, Duration recoveryPeriod) {
    this.scan = scan;
    this.clock = clock;
    this.recoveryPeriod = recoveryPeriod;
  }

  /** Runs the audit from the command line; returns its exit status ({@link AuditCommand#run}). */
  public static int run(StoreServiceConfig config, String[] args, PrintStream out, Duration recoveryPeriod) {
    return AuditCommand.run(config, args, out, "order-audit", "orders",
        scan -> new OrderAudit(scan, Clock.systemUTC(), recoveryPeriod).audit());
  }

  /**
   * Walks the whole table; blocks until done (this is a tool, not a request handler).
   *
   * @throws java.util.concurrent.CompletionException with the first DynamoDB failure of any segment, which ends the audit
   */
  public AuditReport audit() {
    List<Finding> findings = Collections.synchronizedList(new ArrayList<>());
    AtomicLong orders = new AtomicLong();
    scan.scan(List.of(OrderItems.DIRECT_COPY, OrderItems.CORRIDOR_COPY), page -> {
      List<Map<String, AttributeValue>> direct = new ArrayList<>();
      List<Map<String, AttributeValue>> corridor = new ArrayList<>();
      for (Map<String, AttributeValue> item : page) {
        (OrderItems.DIRECT_COPY.equals(item.get("entity").s()) ? direct : corridor).add(item);
      }
      orders.addAndGet(direct.size());
      checkTwins(direct, true, findings);
      checkTwins(corridor, false, findings);
      checkStock(direct, findings);
    });
    return new AuditReport(Map.of("orders", orders.get()), findings);
  }

  /** For each copy, reads its twin: a missing twin or a disagreement is a finding. */
  private void checkTwins(List<Map<String, AttributeValue>> copies, boolean fromDirect, List<Finding> findings) {
    Map<String, Map<String, AttributeValue>> twins = scan.batchGet(copies.stream().map(c -> twinKey(c, fromDirect)).toList());
    for (Map<String, AttributeValue> copy : copies) {
      String subject = "order_id=" + copy.get("order_id").s();
      Map<String, AttributeValue> twin = twins.get(PacedScan.keyText(twinKey(copy, fromDirect)));
      if (twin == null) {
        findings.add(new Finding(fromDirect ? "MISSING_CUSTOMER_COPY" : "MISSING_DIRECT_COPY", subject,
            "customer_id=" + copy.get("customer_id").s()));
      } else if (fromDirect && !disagreement(copy, twin).isEmpty()) {
        // Read both again, strongly: an update may have landed between the scan and the batch read.
        Map<String, AttributeValue> directNow = scan.get(copy);
        Map<String, AttributeValue> corridorNow = scan.get(twin);
        List<String> differing = directNow == null || corridorNow == null ? List.of("missing")
            : disagreement(directNow, corridorNow);
        if (!differing.isEmpty()) {
          findings.add(new Finding("COPIES_DISAGREE", subject, "attributes=" + String.join(",", differing)));
        }
      }
    }
  }

  /** For each direct copy of an order with lines, reads its reservation: see the class's comment. */
  private void checkStock(List<Map<String, AttributeValue>> direct, List<Finding> findings) {
    List<Map<String, AttributeValue>> buying = direct.stream().filter(OrderAudit::hasLines).toList();
    if (buying.isEmpty()) {
      return;
    }
    Map<String, Map<String, AttributeValue>> reservations =
        scan.batchGet(buying.stream().map(c -> reservationKey(c.get("order_id").s())).toList());
    for (Map<String, AttributeValue> copy : buying) {
      Map<String, AttributeValue> key = reservationKey(copy.get("order_id").s());
      if (stockFindings(copy, reservations.get(PacedScan.keyText(key))).isEmpty()) {
        continue;
      }
      // Read again, strongly: the order, its reservation, the order again. An order that changed in
      // between is being worked on (a step being done), and what it owes is not yet a finding.
      Map<String, AttributeValue> orderNow = scan.get(copy);
      Map<String, AttributeValue> reservationNow = scan.get(key);
      Map<String, AttributeValue> orderAgain = scan.get(copy);
      if (orderNow != null && orderNow.equals(orderAgain)) {
        findings.addAll(stockFindings(orderNow, reservationNow));
      }
    }
  }

  /** The findings of one order and its reservation; an order item that cannot be read is one itself. */
  private List<Finding> stockFindings(Map<String, AttributeValue> directCopy, Map<String, AttributeValue> reservation) {
    try {
      return stockFindings(OrderItems.order(directCopy), reservation);
    } catch (RuntimeException unreadable) {
      return List.of(new Finding("UNREADABLE_ORDER", "order_id=" + directCopy.get("order_id").s(),
          "detail=" + unreadable.getClass().getSimpleName()));
    }
  }

  private List<Finding> stockFindings(Order order, Map<String, AttributeValue> reservation) {
    Instant now = clock.instant();
    String subject = "order_id=" + order.orderId();
    List<Finding> found = new ArrayList<>();
    Optional<PendingStep> pending = order.pending();
    boolean overdue = pending.isPresent() && pending.get().due().plus(recoveryPeriod).isBefore(now);
    if (overdue) {
      found.add(new Finding("STOCK_STEP_OVERDUE", subject, "status=" + order.status() + " step=" + pending.get().step()
          + " due=" + pending.get().due()));
    }
    String state = reservation == null ? null : Optional.ofNullable(reservation.get("state")).map(AttributeValue::s).orElse("none");
    StockStep owed = pending.map(PendingStep::step).orElse(null);
    if (HOLDING.contains(order.status()) || SHIPPED.contains(order.status())) {
      Set<String> expected = HOLDING.contains(order.status()) ? Set.of("CONFIRMED")
          : owed == StockStep.COMMIT ? Set.of("CONFIRMED", "COMMITTED") : Set.of("COMMITTED");
      if (reservation == null) {
        found.add(new Finding("MISSING_RESERVATION", subject, "status=" + order.status()));
      } else if (!expected.contains(state)) {
        found.add(new Finding("RESERVATION_STATE_MISMATCH", subject, "status=" + order.status() + " reservation=" + state
            + " expected=" + String.join("|", new TreeSet<>(expected))));
      } else if (!orderQuantities(order).equals(reservedQuantities(reservation))) {
        found.add(new Finding("RESERVATION_LINES_DISAGREE", subject, "status=" + order.status() + " ordered="
            + orderQuantities(order) + " reserved=" + reservedQuantities(reservation)));
      }
    } else if (ENDED.contains(order.status())) {
      boolean releaseInTime = owed == StockStep.RELEASE && !overdue;
      if (reservation != null && !"RELEASED".equals(state) && !releaseInTime) {
        found.add(new Finding("RESERVATION_NOT_RELEASED", subject, "status=" + order.status() + " reservation=" + state));
      }
    }
    return found;
  }

  private static boolean hasLines(Map<String, AttributeValue> directCopy) {
    AttributeValue count = directCopy.get("line_count");
    return count != null && count.n() != null && Long.parseLong(count.n()) > 0;
  }

  public static Map<String, AttributeValue> reservationKey(String orderId) {
    return RESERVATION.render(orderId).attributes();
  }

  /** Units per product and warehouse: the inventory merges an order's lines of the same pair. */
  private static Map<String, Long> orderQuantities(Order order) {
    Map<String, Long> units = new TreeMap<>();
    for (OrderLine line : order.lines()) {
      units.merge(line.productId() + "@" + line.warehouseId(), line.quantity(), Long::sum);
    }
    return units;
  }

  private static Map<String, Long> reservedQuantities(Map<String, AttributeValue> reservation) {
    Map<String, Long> units = new TreeMap<>();
    AttributeValue lines = reservation.get("lines");
    if (lines != null && lines.hasL()) {
      for (AttributeValue value : lines.l()) {
        Map<String, AttributeValue> l = value.m();
        AttributeValue product = l.get("product_id");
        AttributeValue warehouse = l.get("warehouse_id");
        AttributeValue quantity = l.get("quantity");
        if (product == null || warehouse == null || quantity == null) {
          units.merge("unreadable", 1L, Long::sum);
        } else {
          units.merge(product.s() + "@" + warehouse.s(), Long.parseLong(quantity.n()), Long::sum);
        }
      }
    }
    return units;
  }

  private static List<String> disagreement(Map<String, AttributeValue> a, Map<String, AttributeValue> b) {
    return OrderItems.SHARED_ATTRIBUTES.stream().filter(name -> !Objects.equals(a.get(name), b.get(name))).toList();
  }

  private static Map<String, AttributeValue> twinKey(Map<String, AttributeValue> copy, boolean fromDirect) {
    String orderId = copy.get("order_id").s();
    return fromDirect
        ? OrderItems.corridorKey(copy.get("customer_id").s(), LocalDate.parse(copy.get("order_date").s()), orderId)
        : OrderItems.directKey(orderId);
  }
}
