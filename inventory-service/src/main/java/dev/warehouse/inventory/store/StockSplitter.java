package dev.warehouse.inventory.store;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.routing.Route;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Raises a product's bucket count when the hot-key detector names one of its stock items: every
 * {@link HotKeys#SLOT}, the write units a second each stock item took over the detector's window,
 * summed over the patterns that write stock, are compared with {@code splitAt}; a product whose item is
 * past it gets twice the buckets (at most {@link ProductInventory#MAX_BUCKETS}) at the warehouse this
 * process held it at most, through W10 like an operator's call. The detector names a partition key, and a
 * product's record shares its partition with the product's other warehouses: the holds this process
 * counted say which warehouse is the hot one. It never lowers a count: after the sale, an operator does.
 */
public final class StockSplitter implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StockSplitter.class);

  /** The patterns whose writes land on stock items: every route that writes a bucket, but W10's own moves. */
  static final List<String> STOCK_WRITES = InventoryKeys.ALL_ROUTES.routes().stream()
      .filter(r -> r != InventoryKeys.SET_STOCK_BUCKETS)
      .filter(r -> r.alsoWrites().stream().anyMatch(k -> k.partitionKey().variables().contains("bucket")))
      .map(Route::patternId).sorted().toList();

  /** Sets a stock's bucket count (W10). */
  @FunctionalInterface
  public interface BucketCounts {
    CompletableFuture<?> set(String productId, String warehouseId, int bucketCount);
  }

  private final HotKeys hotKeys;
  private final StockBuckets buckets;
  private final BucketCounts counts;
  private final double splitAt;
  private final Counter raised;
  private ScheduledFuture<?> task;

  /**
   * @param splitAt the write units a second of one stock item past which its product is split further
   *                ({@code STOCK_SPLIT_AT_UNITS}; DynamoDB serves 1,000 per partition)
   */
  public StockSplitter(HotKeys hotKeys, StockBuckets buckets, BucketCounts counts, double splitAt, MeterRegistry meters) {
    this.hotKeys = hotKeys;
    this.buckets = buckets;
    this.counts = counts;
    this.splitAt = splitAt;
    this.raised = Counter.builder("stock.bucket.raises")
        .description("bucket counts the hot-key detector raised (SetStockBuckets by the service itself)")
        .register(meters);
  }

  /** Looks every {@link HotKeys#SLOT} on {@code timer}; closing it stops. */
  public StockSplitter start(ScheduledExecutorService timer) {
    task = timer.scheduleAtFixedRate(this::lookSafely, HotKeys.SLOT.toMillis(), HotKeys.SLOT.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  private void lookSafely() {
    try {
      look();
    } catch (RuntimeException e) {
      Events.warn(log, "stock_split_failed").addKeyValue("detail", e.toString()).log(); // the next slot looks again
    }
  }

  /** One look: the bucket counts it asked for, by product (for tests; the calls run on). */
  Map<String, Integer> look() {
    Map<String, StockBuckets.Busiest> busiest = buckets.busiestSince();
    Map<String, Double> unitsPerSecond = new HashMap<>();
    for (String pattern : STOCK_WRITES) {
      for (HotKeys.PatternReport report : hotKeys.report(Optional.of(pattern), HotKeys.TOP_K)) {
        for (HotKeys.KeyReport key : report.keys()) {
          unitsPerSecond.merge(key.partitionKey(), key.capacityUnitsPerSecond(), Double::sum);
        }
      }
    }
    Map<String, Integer> asked = new HashMap<>();
    unitsPerSecond.forEach((pk, units) -> {
      if (units < splitAt) {
        return;
      }
      InventoryKeys.productOfStock(pk).ifPresent(productId -> {
        StockBuckets.Busiest stock = busiest.get(productId);
        if (stock == null || stock.bucketCount() >= ProductInventory.MAX_BUCKETS || asked.containsKey(productId)) {
          return; // not held here lately (another instance will see it), or split all it can be
        }
        int next = Math.min(ProductInventory.MAX_BUCKETS, stock.bucketCount() * 2);
        asked.put(productId, next);
        raised.increment();
        Events.info(log, "stock_split").addKeyValue("product_id", productId).addKeyValue("warehouse_id", stock.warehouseId())
            .addKeyValue("partition_key", pk).addKeyValue("units_per_second", Math.round(units))
            .addKeyValue("bucket_count", next).log();
        counts.set(productId, stock.warehouseId(), next).whenComplete((ok, failure) -> {
          if (failure != null) {
            Events.warn(log, "stock_split_failed").addKeyValue("product_id", productId)
                .addKeyValue("detail", failure.toString()).log();
          }
        });
      });
    });
    return asked;
  }

  @Override
  public void close() {
    if (task != null) {
      task.cancel(false);
    }
  }
}
