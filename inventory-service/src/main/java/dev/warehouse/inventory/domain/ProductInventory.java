package dev.warehouse.inventory.domain;

import java.time.Instant;

/** The stock of one product at one warehouse (A2, listed by A3 and A4). */
public record ProductInventory(String productId, String warehouseId, long quantity, Instant updateTime) {

  /**
   * The most units one stock record may hold (10^15): far above any warehouse, far below where a
   * 64-bit reader would overflow. Validation refuses more, and AdjustStock's condition keeps it.
   */
  public static final long MAX_QUANTITY = 1_000_000_000_000_000L;

  public ProductInventory withUpdateTime(Instant time) {
    return new ProductInventory(productId, warehouseId, quantity, time);
  }
}
