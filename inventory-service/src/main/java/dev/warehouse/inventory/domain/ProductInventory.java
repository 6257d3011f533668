package dev.warehouse.inventory.domain;

import dev.warehouse.runtime.error.FailedPreconditionException;
import java.time.Instant;
import java.util.Map;

/**
 * The stock of one product at one warehouse (A2, listed by A3 and A4; by A7 while it is low).
 *
 * @param quantity     units on hand
 * @param reorderPoint at or below this many available units the record is low (0: only when none is available)
 * @param reserved     units on hand held for orders (a reservation's lines); from 0 to {@code quantity}
 * @param bucketCount  the buckets a hot product's units are spread over (SetStockBuckets), 1 unless split;
 *                     the counts are their sums
 */
public record ProductInventory(String productId, String warehouseId, long quantity, long reorderPoint, Instant updateTime,
    long reserved, int bucketCount) {

  /** The most buckets one product's stock at one warehouse may be spread over. */
  public static final int MAX_BUCKETS = 16;

  /** Stock in one bucket (not split). */
  public ProductInventory(String productId, String warehouseId, long quantity, long reorderPoint, Instant updateTime,
      long reserved) {
    this(productId, warehouseId, quantity, reorderPoint, updateTime, reserved, 1);
  }

  /**
   * The most units one stock record may hold (10^15): far above any warehouse, far below where a
   * 64-bit reader would overflow. Validation refuses more, and AdjustStock's condition keeps it.
   */
  public static final long MAX_QUANTITY = 1_000_000_000_000_000L;

  /** A record with nothing reserved (a new one, or one written before reservations existed). */
  public ProductInventory(String productId, String warehouseId, long quantity, long reorderPoint, Instant updateTime) {
    this(productId, warehouseId, quantity, reorderPoint, updateTime, 0);
  }

  public ProductInventory withUpdateTime(Instant time) {
    return new ProductInventory(productId, warehouseId, quantity, reorderPoint, time, reserved, bucketCount);
  }

  public ProductInventory withQuantity(long newQuantity, Instant time) {
    return new ProductInventory(productId, warehouseId, newQuantity, reorderPoint, time, reserved, bucketCount);
  }

  /** The record after {@code quantityDelta} on hand and {@code reservedDelta} reserved. */
  public ProductInventory changed(long quantityDelta, long reservedDelta, Instant time) {
    return new ProductInventory(productId, warehouseId, quantity + quantityDelta, reorderPoint, time, reserved + reservedDelta,
        bucketCount);
  }

  public ProductInventory withReserved(long newReserved) {
    return new ProductInventory(productId, warehouseId, quantity, reorderPoint, updateTime, newReserved, bucketCount);
  }

  /** The same stock, reported as spread over {@code count} buckets. */
  public ProductInventory withBucketCount(int count) {
    return new ProductInventory(productId, warehouseId, quantity, reorderPoint, updateTime, reserved, count);
  }

  /**
   * This record written over {@code current} (PutProductInventory): the quantity sets what is on hand,
   * and the units {@code current} holds reserved for orders are kept, so it may not go below them.
   *
   * @throws FailedPreconditionException STOCK_RESERVED
   */
  public ProductInventory replacing(java.util.Optional<ProductInventory> current) {
    ProductInventory next = withReserved(current.map(ProductInventory::reserved).orElse(0L))
        .withBucketCount(current.map(ProductInventory::bucketCount).orElse(1));
    if (next.quantity < next.reserved) {
      throw next.stockReserved(next.quantity);
    }
    return next;
  }

  /** FAILED_PRECONDITION STOCK_RESERVED: a write would leave fewer units on hand than are reserved. */
  FailedPreconditionException stockReserved(long quantityAfter) {
    return new FailedPreconditionException("STOCK_RESERVED",
        "product " + productId + " at warehouse " + warehouseId + " has " + reserved
            + " units reserved for orders: its quantity may not go below that (asked for " + quantityAfter + ")",
        Map.of("product_id", productId, "warehouse_id", warehouseId,
            "reserved", Long.toString(reserved), "requested_quantity", Long.toString(quantityAfter)));
  }

  /** Units that can still be promised: on hand and not reserved. */
  public long available() {
    return quantity - reserved;
  }

  /** Whether A7 lists it: its available units are at or below its reorder point. */
  public boolean low() {
    return available() <= reorderPoint;
  }
}
