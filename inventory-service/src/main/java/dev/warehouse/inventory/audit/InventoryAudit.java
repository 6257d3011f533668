package dev.warehouse.inventory.audit;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.store.ReservationItems;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.Finding;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.runtime.dynamo.DeclaredKey;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.routing.RouteTable;
import dev.warehouse.runtime.dynamo.TableKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The consistency audit of A7's low-stock markers: an admin tool, off the request path, that walks
 * every stock record and every marker and reports each marker without its low record
 * ({@code STRAY_MARKER}: the record is missing, not low, or holds another quantity) and each low
 * record without its marker ({@code MISSING_MARKER}). A record is low when its available units are at
 * or below its reorder point; its one marker is {@link LowStockShards#marker} of its available count.
 *
 * <p>It scans the table in parallel segments, paced by a rate limiter ({@link PacedScan}), and for each
 * page batch-reads, strongly, the marker of every low record and the record of every marker. A scan is
 * not a snapshot (markers move within their shard as stock changes, and a page read a moment ago may
 * be stale), so every suspect pair is read again before it is reported: the record, then the marker,
 * then the record again, all strongly. Markers change only in the transaction that changes their
 * record, so when the record read the same both times, the marker read between them is the one that
 * went with it. A record that kept changing over {@value #SETTLE_ROUNDS} such rounds is being written
 * through the service, which keeps its marker, and is not reported. An item that cannot be read as a
 * record or a marker is {@code UNREADABLE_ITEM}.
 *
 * <p>Reservations: every record must keep {@code quantity >= reserved >= 0} and store
 * {@code available = quantity - reserved} ({@code STOCK_INVARIANT}); a record is low, and its marker
 * keyed, by {@code available}. The same scan sums the lines of every HELD and CONFIRMED reservation per
 * stock record; a record whose {@code reserved} differs from its sum, still after a strong re-read of
 * the record and of the reservations counted for it, is {@code RESERVED_MISMATCH}. A reservation
 * written while the scan runs can make a sum incomplete: run it again before acting on one.
 *
 * <p>A stock split over buckets is low, and its marker keyed, by the sums of its buckets (each read strongly);
 * each bucket keeps the invariant, and its {@code reserved} is matched against the reservations' takes from it.
 *
 * <p>A CONFIRMED reservation holds stock for a placed order: one whose order does not exist (read, like the
 * order-service's own A6, at the key its GetOrder route declares; the audit reads the orders' items, never
 * writes them), still after a strong re-read of both, holds units that no one can ship or cancel:
 * {@code CONFIRMED_WITHOUT_ORDER}.
 */
public final class InventoryAudit {

  /** An order's direct copy: the key the order-service's GetOrder route declares. */
  private static final DeclaredKey ORDER = DeclaredKey.of(RouteTable.of(
      OrderServiceProto.getDescriptor().findServiceByName("OrderService")).route("GetOrder"), "order_id");

  /** Rounds of re-reading a suspect pair while its record keeps changing. */
  static final int SETTLE_ROUNDS = 3;

  private final PacedScan scan;
  private final LowStockShards shards;

  /** @param shards the shard count the services write markers with: a marker elsewhere is reported */
  public InventoryAudit(PacedScan scan, LowStockShards shards) {
    this.scan = scan;
    this.shards = shards;
  }

  /** The audit as a command line over markers of {@code shards}; it returns its exit status ({@link AuditCommand#run}). */
  public static AuditCommand.Line command(LowStockShards shards) {
    return (config, args, out) ->
        AuditCommand.run(config, args, out, "inventory-audit", "low_stock", scan -> new InventoryAudit(scan, shards).audit());
  }

  /**
   * Walks the whole table; blocks until done (this is a tool, not a request handler).
   *
   * @throws java.util.concurrent.CompletionException with the first DynamoDB failure of any segment, which ends the audit
   */
  public AuditReport audit() {
    List<Finding> findings = Collections.synchronizedList(new ArrayList<>());
    AtomicLong records = new AtomicLong();
    AtomicLong low = new AtomicLong();
    AtomicLong markers = new AtomicLong();
    Map<TableKey, Long> reservedOf = new ConcurrentHashMap<>();
    Map<TableKey, Long> heldFor = new ConcurrentHashMap<>();
    Map<TableKey, List<String>> holders = new ConcurrentHashMap<>();
    scan.scan(List.of(InventoryItems.STOCK, InventoryItems.STOCK_BUCKET, InventoryItems.LOW_STOCK_MARKER,
        ReservationItems.RESERVATION), page -> {
      List<ProductInventory> lowRecords = new ArrayList<>();
      List<Map<String, AttributeValue>> markerItems = new ArrayList<>();
      List<String> confirmed = new ArrayList<>();
      for (Map<String, AttributeValue> item : page) {
        if (ReservationItems.RESERVATION.equals(item.get("entity").s())) {
          countHeld(item, heldFor, holders, findings);
          if ("CONFIRMED".equals(item.get("state") == null ? null : item.get("state").s())) {
            confirmed.add(item.get("order_id").s());
          }
          continue;
        }
        if (InventoryItems.STOCK_BUCKET.equals(item.get("entity").s())) {
          // A split stock's bucket: its own invariant and reserved units; its units count in its record's sum.
          Optional<ProductInventory> bucket = read(item);
          if (bucket.isEmpty() || !item.containsKey("bucket")) {
            findings.add(new Finding("UNREADABLE_ITEM", "pk=" + item.get(SingleTable.PK).s() + " sk=" + item.get(SingleTable.SK).s(),
                "entity=" + InventoryItems.STOCK_BUCKET));
            continue;
          }
          int index = Integer.parseInt(item.get("bucket").n());
          reservedOf.put(InventoryKeys.stockBucket(bucket.get().productId(), bucket.get().warehouseId(), index), bucket.get().reserved());
          invariant(item, bucket.get()).ifPresent(why -> findings.add(new Finding("STOCK_INVARIANT",
              subject(bucket.get()) + " bucket=" + index, why)));
          continue;
        }
        boolean marker = InventoryItems.LOW_STOCK_MARKER.equals(item.get("entity").s());
        (marker ? markers : records).incrementAndGet();
        Optional<ProductInventory> read = read(item);
        if (!marker && read.isPresent()) {
          reservedOf.put(InventoryKeys.stock(read.get().productId(), read.get().warehouseId()), read.get().reserved());
          invariant(item, read.get()).ifPresent(why -> findings.add(new Finding("STOCK_INVARIANT", subject(read.get()), why)));
        }
        if (read.isEmpty()) {
          findings.add(new Finding("UNREADABLE_ITEM", "pk=" + item.get(SingleTable.PK).s() + " sk=" + item.get(SingleTable.SK).s(),
              "entity=" + item.get("entity").s()));
        } else if (marker) {
          markerItems.add(item);
        } else {
          // Low by the sum of all its buckets, for a split stock.
          read(whole(item)).filter(ProductInventory::low).ifPresent(lowRecords::add);
        }
      }
      low.addAndGet(lowRecords.size());
      checkRecords(lowRecords, findings);
      checkMarkers(markerItems, findings);
      checkOrdersOf(confirmed, findings);
    });
    checkReserved(reservedOf, heldFor, holders, findings);
    Map<String, Long> counts = new LinkedHashMap<>();
    counts.put("records", records.get());
    counts.put("low", low.get());
    counts.put("markers", markers.get());
    return new AuditReport(counts, findings);
  }

  /** What breaks {@code quantity >= reserved >= 0} and {@code available = quantity - reserved} in a record; empty when none. */
  private static Optional<String> invariant(Map<String, AttributeValue> item, ProductInventory r) {
    if (r.reserved() < 0 || r.reserved() > r.quantity()) {
      return Optional.of("reserved=" + r.reserved() + " outside 0..quantity");
    }
    AttributeValue available = item.get("available");
    if (item.containsKey("reserved") && (available == null || Long.parseLong(available.n()) != r.available())) {
      return Optional.of("reserved=" + r.reserved() + " available=" + (available == null ? "missing" : available.n())
          + " expected_available=" + r.available());
    }
    return Optional.empty();
  }

  /** Adds a HELD or CONFIRMED reservation's lines to the sums of their stock records. */
  private static void countHeld(Map<String, AttributeValue> item, Map<TableKey, Long> heldFor,
      Map<TableKey, List<String>> holders, List<Finding> findings) {
    Reservation r;
    try {
      r = ReservationItems.toReservation(item);
    } catch (RuntimeException malformed) {
      findings.add(new Finding("UNREADABLE_ITEM", "pk=" + item.get(SingleTable.PK).s() + " sk=" + item.get(SingleTable.SK).s(),
          "entity=" + ReservationItems.RESERVATION));
      return;
    }
    if (!r.holds()) {
      return;
    }
    for (ReservationLine line : r.lines()) {
      for (ReservationLine.Take take : line.takesOrWhole()) {
        TableKey bucket = InventoryKeys.stockBucket(line.productId(), line.warehouseId(), take.bucket());
        heldFor.merge(bucket, take.quantity(), Long::sum);
        holders.computeIfAbsent(bucket, k -> Collections.synchronizedList(new ArrayList<>())).add(r.orderId());
      }
    }
  }

  /**
   * Each record's {@code reserved} against the lines held for it; a difference is re-read strongly (the
   * record, and the reservations counted for it) before it is reported.
   */
  private void checkReserved(Map<TableKey, Long> reservedOf, Map<TableKey, Long> heldFor, Map<TableKey, List<String>> holders,
      List<Finding> findings) {
    java.util.Set<TableKey> stocks = new java.util.HashSet<>(reservedOf.keySet());
    stocks.addAll(heldFor.keySet());
    for (TableKey stock : stocks) {
      if (Objects.equals(reservedOf.getOrDefault(stock, 0L), heldFor.getOrDefault(stock, 0L))) {
        continue;
      }
      Optional<ProductInventory> record = read(scan.get(stock.attributes()));
      long held = 0;
      for (String orderId : holders.getOrDefault(stock, List.of())) {
        Map<String, AttributeValue> item = scan.get(InventoryKeys.reservation(orderId).attributes());
        if (item != null) {
          Reservation r = ReservationItems.toReservation(item);
          if (r.holds()) {
            held += r.lines().stream().flatMap(l -> l.takesOrWhole().stream()
                    .filter(t -> InventoryKeys.stockBucket(l.productId(), l.warehouseId(), t.bucket()).equals(stock)))
                .mapToLong(ReservationLine.Take::quantity).sum();
          }
        }
      }
      long reserved = record.map(ProductInventory::reserved).orElse(0L);
      if (reserved != held) {
        findings.add(new Finding("RESERVED_MISMATCH", record.map(InventoryAudit::subject).orElse("pk=" + stock.pk() + " sk=" + stock.sk()),
            "reserved=" + reserved + " held_by_reservations=" + held + (record.isEmpty() ? " record=missing" : "")));
      }
    }
  }

  /**
   * For each CONFIRMED reservation, reads its order: one without, still so when the reservation and then the
   * order are read again strongly (a reservation confirmed a moment before its order was written PLACED is
   * not a finding: the order exists from its PENDING write on), is a finding.
   */
  private void checkOrdersOf(List<String> confirmedOrderIds, List<Finding> findings) {
    if (confirmedOrderIds.isEmpty()) {
      return;
    }
    Map<String, Map<String, AttributeValue>> orders = scan.batchGet(confirmedOrderIds.stream()
        .map(id -> ORDER.render(id).attributes()).toList());
    for (String orderId : confirmedOrderIds) {
      Map<String, AttributeValue> key = ORDER.render(orderId).attributes();
      if (orders.containsKey(PacedScan.keyText(key))) {
        continue;
      }
      Map<String, AttributeValue> reservation = scan.get(InventoryKeys.reservation(orderId).attributes());
      boolean stillConfirmed = reservation != null && reservation.containsKey("state")
          && "CONFIRMED".equals(reservation.get("state").s());
      if (stillConfirmed && scan.get(key) == null) {
        findings.add(new Finding("CONFIRMED_WITHOUT_ORDER", "order_id=" + orderId, "reservation=CONFIRMED order=missing"));
      }
    }
  }

  /** For each low record, reads its marker: a missing one, still missing when re-read, is a finding. */
  private void checkRecords(List<ProductInventory> lowRecords, List<Finding> findings) {
    Map<String, Map<String, AttributeValue>> found = scan.batchGet(lowRecords.stream().map(r -> markerKey(r).attributes()).toList());
    for (ProductInventory record : lowRecords) {
      if (found.containsKey(PacedScan.keyText(markerKey(record).attributes()))) {
        continue;
      }
      settle(record.productId(), record.warehouseId(), now -> read(now).filter(ProductInventory::low).map(this::markerKey))
          .filter(pair -> pair.marker() == null)
          .flatMap(pair -> read(pair.record()).filter(ProductInventory::low))
          .ifPresent(now -> findings.add(new Finding("MISSING_MARKER", subject(now), "reorder_point=" + now.reorderPoint())));
    }
  }

  /** For each marker, reads its record: a marker its record does not explain, still there when re-read, is a finding. */
  private void checkMarkers(List<Map<String, AttributeValue>> markers, List<Finding> findings) {
    Map<String, Map<String, AttributeValue>> found = scan.batchGet(markers.stream().map(InventoryAudit::recordKey).toList());
    for (Map<String, AttributeValue> marker : markers) {
      if (stray(marker, whole(found.get(PacedScan.keyText(recordKey(marker))))).isEmpty()) {
        continue;
      }
      TableKey at = TableKey.of(marker);
      ProductInventory seen = read(marker).orElseThrow();
      settle(seen.productId(), seen.warehouseId(), now -> Optional.of(at))
          .filter(pair -> pair.marker() != null)
          .ifPresent(pair -> stray(pair.marker(), pair.record()).ifPresent(why ->
              findings.add(new Finding("STRAY_MARKER", subject(read(pair.marker()).orElse(seen)), why))));
    }
  }

  /** Why {@code marker} is not its record's (as a finding's detail), or empty when it is. */
  private Optional<String> stray(Map<String, AttributeValue> marker, Map<String, AttributeValue> recordItem) {
    if (recordItem == null) {
      return Optional.of("record=missing");
    }
    Optional<ProductInventory> record = read(recordItem);
    if (record.isEmpty()) {
      return Optional.of("record=unreadable");
    }
    ProductInventory r = record.get();
    if (!r.low()) {
      return Optional.of("record=not_low record_available=" + r.available() + " reorder_point=" + r.reorderPoint());
    }
    Optional<ProductInventory> m = read(marker);
    TableKey expected = markerKey(r);
    TableKey at = TableKey.of(marker);
    boolean same = m.isPresent() && m.get().available() == r.available() && m.get().quantity() == r.quantity();
    if (same && expected.equals(at)) {
      return Optional.empty();
    }
    if (same) {
      return Optional.of("expected_key=" + expected.pk() + "/" + expected.sk()); // its key is not its available count's
    }
    return Optional.of("record_quantity=" + r.quantity() + " record_available=" + r.available() + " reorder_point="
        + r.reorderPoint());
  }

  private static Map<String, AttributeValue> recordKey(Map<String, AttributeValue> marker) {
    ProductInventory m = read(marker).orElseThrow();
    return InventoryKeys.stock(m.productId(), m.warehouseId()).attributes();
  }

  /** A record and the marker read beside it ({@code null}: absent). */
  private record Pair(Map<String, AttributeValue> record, Map<String, AttributeValue> marker) {}

  /**
   * Reads the stock record of {@code productId} at {@code warehouseId}, then the marker {@code markerOf}
   * names for it (given the record, {@code null} when absent; when it names none, nothing is read), then
   * the record again, all strongly; returns the pair once the record read the same both times, or empty
   * when it changed every round (busy, not broken).
   */
  private Optional<Pair> settle(String productId, String warehouseId,
      Function<Map<String, AttributeValue>, Optional<TableKey>> markerOf) {
    Map<String, AttributeValue> stockKey = InventoryKeys.stock(productId, warehouseId).attributes();
    Map<String, AttributeValue> before = whole(scan.get(stockKey));
    for (int round = 0; round < SETTLE_ROUNDS; round++) {
      Optional<TableKey> markerKey = markerOf.apply(before);
      Map<String, AttributeValue> marker = markerKey.map(key -> scan.get(key.attributes())).orElse(null);
      Map<String, AttributeValue> after = whole(scan.get(stockKey));
      if (Objects.equals(before, after)) {
        return Optional.of(new Pair(after, marker));
      }
      before = after;
    }
    return Optional.empty();
  }

  /**
   * A stock record as every read reports it: for a split stock, the sums of its buckets' units (each
   * bucket read strongly), with the record's other attributes; the record itself otherwise, or null.
   */
  private Map<String, AttributeValue> whole(Map<String, AttributeValue> record) {
    if (record == null || !record.containsKey("buckets_kept") || Integer.parseInt(record.get("buckets_kept").n()) <= 1) {
      return record;
    }
    Optional<ProductInventory> r = read(record);
    if (r.isEmpty()) {
      return record;
    }
    long quantity = r.get().quantity();
    long reserved = r.get().reserved();
    for (int b = 1; b < Integer.parseInt(record.get("buckets_kept").n()); b++) {
      Optional<ProductInventory> bucket = read(scan.get(InventoryKeys.stockBucket(r.get().productId(), r.get().warehouseId(), b)
          .attributes()));
      quantity += bucket.map(ProductInventory::quantity).orElse(0L);
      reserved += bucket.map(ProductInventory::reserved).orElse(0L);
    }
    Map<String, AttributeValue> sum = new java.util.HashMap<>(record);
    sum.put("quantity", AttributeValue.fromN(Long.toString(quantity)));
    sum.put("reserved", AttributeValue.fromN(Long.toString(reserved)));
    sum.put("available", AttributeValue.fromN(Long.toString(quantity - reserved)));
    return sum;
  }

  private TableKey markerKey(ProductInventory record) {
    return shards.marker(record.productId(), record.warehouseId(), record.available());
  }

  /**
   * A record or a marker (they carry the same attributes); empty when it is absent ({@code null}), lacks
   * one or holds a malformed one.
   */
  private static Optional<ProductInventory> read(Map<String, AttributeValue> item) {
    if (item == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(InventoryItems.toProductInventory(item));
    } catch (RuntimeException malformed) {
      return Optional.empty();
    }
  }

  private static String subject(ProductInventory stock) {
    return "product_id=" + stock.productId() + " warehouse_id=" + stock.warehouseId() + " quantity=" + stock.quantity();
  }
}
