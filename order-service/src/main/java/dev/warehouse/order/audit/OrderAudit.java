package dev.warehouse.order.audit;

import dev.warehouse.order.store.OrderItems;
import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.Finding;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.config.ServiceConfig;
import java.io.PrintStream;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The consistency audit of orders: an admin tool, off the request path, that walks every order and
 * reports each order whose two copies disagree or lack one another. It scans the table in parallel
 * segments, paced by a rate limiter ({@link PacedScan}), and for each page of copies batch-reads their
 * twins. A disagreement is read again, strongly, before it is reported, so an update landing mid-audit
 * is not a finding. Findings: {@code MISSING_CUSTOMER_COPY}, {@code MISSING_DIRECT_COPY},
 * {@code COPIES_DISAGREE}.
 */
public final class OrderAudit {

  private final PacedScan scan;

  public OrderAudit(PacedScan scan) {
    this.scan = scan;
  }

  /** Runs the audit from the command line; returns its exit status ({@link AuditCommand#run}). */
  public static int run(ServiceConfig config, String[] args, PrintStream out) {
    return AuditCommand.run(config, args, out, "order-audit", "orders", scan -> new OrderAudit(scan).audit());
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
