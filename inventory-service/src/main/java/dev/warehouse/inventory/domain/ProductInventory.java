package dev.warehouse.inventory.domain;

import java.time.Instant;

/**
 * The stock of one product at one warehouse (A2, listed by A3 and A4; by A7 while it is low).
 *
 * @param reorderPoint at or below this quantity the record is low (0: only when out of stock)
 */
public record ProductInventory(String productId, String warehouseId, long quantity, long reorderPoint, Instant updateTime) {

  /**
   * The most units one stock record may hold (10^15): far above any warehouse, far below where a
   * 64-bit reader would overflow. Validation refuses more, and AdjustStock's condition keeps it.
   */
  public static final long MAX_QUANTITY = 1_000_000_000_000_000L;

  public ProductInventory withUpdateTime(Instant time) {
    return new ProductInventory(productId, warehouseId, quantity, reorderPoint, time);
  }

  public ProductInventory withQuantity(long newQuantity, Instant time) {
    return new ProductInventory(productId, warehouseId, newQuantity, reorderPoint, time);
  }

  /** Whether A7 lists it: its quantity is at or below its reorder point. */
  public boolean low() {
    return quantity <= reorderPoint;
  }
}
