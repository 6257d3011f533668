package dev.warehouse.order.domain;

/** Units of one product from one warehouse, at a unit price. */
public record OrderLine(String productId, String warehouseId, long quantity, Money unitPrice) {

  /** The line's amount: quantity times unit price. */
  public Money amount() {
    return unitPrice.times(quantity);
  }

  /** Whether {@code other} is of the same product and warehouse (and so merges with this line). */
  boolean sameStock(OrderLine other) {
    return productId.equals(other.productId) && warehouseId.equals(other.warehouseId);
  }
}
