package dev.warehouse.order.domain;

import dev.warehouse.runtime.error.NotFoundException;
import java.util.Map;

/** A line names a product that is not stocked at its warehouse: NOT_FOUND, reason {@value Rejection#NOT_STOCKED}. */
public final class NotStockedException extends NotFoundException {

  private final String productId;
  private final String warehouseId;

  public NotStockedException(String productId, String warehouseId) {
    super(Rejection.NOT_STOCKED, "product " + productId + " is not stocked at warehouse " + warehouseId,
        Map.of("product_id", productId, "warehouse_id", warehouseId));
    this.productId = productId;
    this.warehouseId = warehouseId;
  }

  public Shortage asShortage(long requested) {
    return new Shortage(productId, warehouseId, requested, 0);
  }

  public String productId() {
    return productId;
  }

  public String warehouseId() {
    return warehouseId;
  }
}
