package dev.warehouse.inventory.domain;

import dev.warehouse.runtime.paging.Page;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Storage of the inventory aggregate. Every read takes exactly its route of the retrieval map; every
 * method completes asynchronously and fails with a {@code dev.warehouse.runtime.error} exception.
 */
public interface InventoryRepository {

  /** A1: GetItem {@code SERIAL#sn / METADATA}. */
  CompletableFuture<Optional<SerialItem>> findSerialItem(String serialNumber, boolean consistentRead);

  /** A2: GetItem {@code PRODUCT#p / WAREHOUSE#w}. */
  CompletableFuture<Optional<ProductInventory>> findInventory(String productId, String warehouseId, boolean consistentRead);

  /**
   * A3: Query {@code PRODUCT#p} with {@code begins_with(SK, "WAREHOUSE#")}.
   *
   * @throws dev.warehouse.runtime.error.InvalidArgumentException for a page token not issued for this product
   */
  CompletableFuture<Page<ProductInventory>> listByProduct(String productId, PageQuery page);

  /**
   * A4: Query GSI1 {@code WAREHOUSE#w} with {@code begins_with(GSI1SK, "PRODUCT#")}; always eventually
   * consistent.
   *
   * @throws dev.warehouse.runtime.error.InvalidArgumentException for a page token not issued for this warehouse
   */
  CompletableFuture<Page<ProductInventory>> listByWarehouse(String warehouseId, PageQuery page);

  /**
   * A7: one Query per shard of {@code LOW_STOCK#ss} with {@code begins_with(SK, "QTY#")}, all at once,
   * merged fewest available first; the page token holds where every shard resumes.
   *
   * @throws dev.warehouse.runtime.error.InvalidArgumentException for a page token not issued for this list
   */
  CompletableFuture<Page<ProductInventory>> listLowStock(PageQuery page);

  /** W1: unconditional PutItem of {@code SERIAL#sn / METADATA} (create or replace). */
  CompletableFuture<SerialItem> putSerialItem(SerialItem item);

  /**
   * W2: replaces (or creates) {@code PRODUCT#p / WAREHOUSE#w} with its GSI1 keys, keeping its reserved
   * units, in one transaction with its marker's move, conditioned on the record as read.
   *
   * @throws dev.warehouse.runtime.error.FailedPreconditionException STOCK_RESERVED, below the reserved units
   */
  CompletableFuture<ProductInventory> putInventory(ProductInventory inventory);

  /**
   * W10: spreads the stock over {@code bucketCount} buckets (1 to {@link ProductInventory#MAX_BUCKETS}),
   * each on its own partition key, whose sums every read reports; units move between them afterwards,
   * off the request path. Answers the stock with its new count.
   *
   * @throws dev.warehouse.runtime.error.NotFoundException when the product is not stocked there
   * @throws dev.warehouse.runtime.error.AbortedException  CONCURRENT_UPDATE, when the counts kept changing
   */
  CompletableFuture<ProductInventory> setBucketCount(String productId, String warehouseId, int bucketCount, Instant now);

  /**
   * W3: one TransactWriteItems of an Update of {@code PRODUCT#p / WAREHOUSE#w} (on hand and available
   * by {@code delta}), conditioned on staying clear of the reorder point or on the record as read, and a Put
   * of the request record {@code PRODUCT#p / REQUEST#id}, conditioned on {@code attribute_not_exists(PK)};
   * then a strongly consistent GetItem of the stock for the answer. A request record of the same
   * change (a replay) is answered with the current stock.
   *
   * @throws dev.warehouse.runtime.error.NotFoundException          when the product is not stocked there
   * @throws dev.warehouse.runtime.error.FailedPreconditionException INSUFFICIENT_STOCK, STOCK_RESERVED or STOCK_LIMIT_EXCEEDED
   * @throws dev.warehouse.runtime.error.AlreadyExistsException      REQUEST_ID_REUSED, for a different change
   * @throws dev.warehouse.runtime.error.AbortedException            TRANSACTION_CONFLICT, when conflicts outlast the retries
   */
  CompletableFuture<ProductInventory> adjustStock(StockAdjustment adjustment, Instant now);
}
