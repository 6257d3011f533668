package dev.warehouse.inventory.store;

import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.routing.Route;

/**
 * A7's low-stock markers over their write shards: the count the route declares ({@link #DECLARED}), or a
 * deployment's own ({@code LOW_STOCK_SHARDS}), so the cost of the fan-out can be measured at several
 * counts. A table's markers live in the shards of the count that wrote them: a process with another
 * count would not find them (the inventory audit reports each one) and refuses the other count's page
 * tokens. Change it only with the table's markers rewritten.
 */
public record LowStockShards(Route.FanOut fanOut) {

  /** The shard count A7's route declares. */
  public static final LowStockShards DECLARED = new LowStockShards(InventoryKeys.LOW_STOCK.fanOut().orElseThrow());

  /** The declared shard key over {@code count} shards, 1 to {@link Route.FanOut#MAX_SHARDS}. */
  public static LowStockShards of(int count) {
    return new LowStockShards(DECLARED.fanOut.withShardCount(count));
  }

  public int count() {
    return fanOut.shardCount();
  }

  /** The shard of a stock record's marker: CRC-32 of {@code p#w}, modulo the count. */
  public int shardOf(String productId, String warehouseId) {
    return fanOut.shardOf(productId, warehouseId);
  }

  /** The marker of a record at {@code warehouseId} holding {@code quantity} units, in its shard. */
  public TableKey marker(String productId, String warehouseId, long quantity) {
    return InventoryKeys.lowStockMarker(shardOf(productId, warehouseId), productId, warehouseId, quantity);
  }
}
