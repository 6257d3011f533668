package dev.warehouse.inventory.domain;

import java.time.Instant;

/** The stock of one product at one warehouse (A2, listed by A3 and A4). */
public record ProductInventory(String productId, String warehouseId, long quantity, Instant updateTime) {

  public ProductInventory withUpdateTime(Instant time) {
    return new ProductInventory(productId, warehouseId, quantity, time);
  }
}
