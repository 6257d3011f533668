package dev.warehouse.inventory.audit;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.Finding;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The consistency audit of A7's low-stock markers: an admin tool, off the request path, that walks
 * every stock record and every marker and reports each marker without its low record
 * ({@code STRAY_MARKER}: the record is missing, not low, or holds another quantity) and each low
 * record without its marker ({@code MISSING_MARKER}). A record is low when its quantity is at or
 * below its reorder point; its one marker is {@link LowStockShards#marker} of its quantity.
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
 */
public final class InventoryAudit {

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
    scan.scan(List.of(InventoryItems.STOCK, InventoryItems.LOW_STOCK_MARKER), page -> {
      List<ProductInventory> lowRecords = new ArrayList<>();
      List<Map<String, AttributeValue>> markerItems = new ArrayList<>();
      for (Map<String, AttributeValue> item : page) {
        boolean marker = InventoryItems.LOW_STOCK_MARKER.equals(item.get("entity").s());
        (marker ? markers : records).incrementAndGet();
        Optional<ProductInventory> read = read(item);
        if (read.isEmpty()) {
          findings.add(new Finding("UNREADABLE_ITEM", "pk=" + item.get(SingleTable.PK).s() + " sk=" + item.get(SingleTable.SK).s(),
              "entity=" + item.get("entity").s()));
        } else if (marker) {
          markerItems.add(item);
        } else if (read.get().low()) {
          lowRecords.add(read.get());
        }
      }
      low.addAndGet(lowRecords.size());
      checkRecords(lowRecords, findings);
      checkMarkers(markerItems, findings);
    });
    Map<String, Long> counts = new LinkedHashMap<>();
    counts.put("records", records.get());
    counts.put("low", low.get());
    counts.put("markers", markers.get());
    return new AuditReport(counts, findings);
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
      if (stray(marker, found.get(PacedScan.keyText(recordKey(marker)))).isEmpty()) {
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
      return Optional.of("record=not_low record_quantity=" + r.quantity() + " reorder_point=" + r.reorderPoint());
    }
    Optional<ProductInventory> m = read(marker);
    TableKey expected = markerKey(r);
    TableKey at = TableKey.of(marker);
    if (m.isPresent() && m.get().quantity() == r.quantity() && expected.equals(at)) {
      return Optional.empty();
    }
    if (m.isPresent() && m.get().quantity() == r.quantity()) {
      return Optional.of("expected_key=" + expected.pk() + "/" + expected.sk()); // its key is not its quantity's
    }
    return Optional.of("record_quantity=" + r.quantity() + " reorder_point=" + r.reorderPoint());
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
    Map<String, AttributeValue> before = scan.get(stockKey);
    for (int round = 0; round < SETTLE_ROUNDS; round++) {
      Optional<TableKey> markerKey = markerOf.apply(before);
      Map<String, AttributeValue> marker = markerKey.map(key -> scan.get(key.attributes())).orElse(null);
      Map<String, AttributeValue> after = scan.get(stockKey);
      if (Objects.equals(before, after)) {
        return Optional.of(new Pair(after, marker));
      }
      before = after;
    }
    return Optional.empty();
  }

  private TableKey markerKey(ProductInventory record) {
    return shards.marker(record.productId(), record.warehouseId(), record.quantity());
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
