package dev.warehouse.inventory.domain;

import java.time.Instant;

/** An item known by its serial number (A1). */
public record SerialItem(String serialNumber, String productId, String warehouseId, String description, Instant updateTime) {

  public SerialItem withUpdateTime(Instant time) {
    return new SerialItem(serialNumber, productId, warehouseId, description, time);
  }
}
