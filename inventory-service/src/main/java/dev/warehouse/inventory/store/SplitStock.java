package dev.warehouse.inventory.store;

import dev.warehouse.inventory.domain.ProductInventory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One product's stock at one warehouse as a snapshot of all its buckets: bucket 0 is the stock record,
 * which also says how many buckets holds take from ({@code active}, N) and how many exist ({@code kept},
 * K: those above N are drained and deleted once their reserved units end). Stock that was never split is
 * the record alone. The snapshot of a split stock is one TransactGetItems, so its sum never counts a
 * unit that a move between buckets was carrying.
 *
 * @param buckets by index, 0 to K-1; empty where a bucket is gone
 */
public record SplitStock(List<Optional<StockChanges.Read>> buckets, int active) {

  public SplitStock {
    buckets = Collections.unmodifiableList(new ArrayList<>(buckets));
  }

  /** Unsplit stock: the record alone. */
  public static SplitStock whole(StockChanges.Read record) {
    return new SplitStock(List.of(Optional.of(record)), 1);
  }

  /** The snapshot from the items of buckets 0 to K-1 as read (an empty map where there is none). */
  static SplitStock of(List<Map<String, AttributeValue>> items) {
    List<Optional<StockChanges.Read>> buckets = items.stream()
        .map(item -> item.isEmpty() ? Optional.<StockChanges.Read>empty() : Optional.of(StockChanges.Read.of(item)))
        .toList();
    return new SplitStock(buckets, buckets.get(0).map(r -> r.stock().bucketCount()).orElse(1));
  }

  public StockChanges.Read record() {
    return buckets.get(0).orElseThrow();
  }

  /** The buckets that exist (K). */
  public int kept() {
    return buckets.size();
  }

  public boolean split() {
    return kept() > 1;
  }

  public Optional<StockChanges.Read> bucket(int index) {
    return index < buckets.size() ? buckets.get(index) : Optional.empty();
  }

  /** The stock every read reports: the buckets' units summed, the record's reorder point, the latest write. */
  public ProductInventory sum() {
    ProductInventory record = record().stock();
    long quantity = 0;
    long reserved = 0;
    Instant latest = record.updateTime();
    for (Optional<StockChanges.Read> bucket : buckets) {
      if (bucket.isPresent()) {
        ProductInventory b = bucket.get().stock();
        quantity += b.quantity();
        reserved += b.reserved();
        latest = b.updateTime().isAfter(latest) ? b.updateTime() : latest;
      }
    }
    return new ProductInventory(record.productId(), record.warehouseId(), quantity, record.reorderPoint(), latest, reserved,
        active);
  }
}
