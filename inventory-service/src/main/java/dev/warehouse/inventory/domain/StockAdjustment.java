package dev.warehouse.inventory.domain;

import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import java.util.Map;

/** A change of stock, applied at most once per {@code requestId}. */
public record StockAdjustment(String productId, String warehouseId, long delta, String requestId) {

  /**
   * The units on hand once this change is applied to {@code current}: never below none, never below
   * the units reserved for orders, never above {@link ProductInventory#MAX_QUANTITY}.
   *
   * @throws FailedPreconditionException INSUFFICIENT_STOCK, STOCK_RESERVED or STOCK_LIMIT_EXCEEDED
   */
  public long quantityAfter(ProductInventory current) {
    long after = current.quantity() + delta;
    if (after < 0) {
      throw new FailedPreconditionException("INSUFFICIENT_STOCK",
          "cannot remove " + (-delta) + " units of product " + productId + " at warehouse "
              + warehouseId + ": only " + current.quantity() + " in stock",
          Map.of("product_id", productId, "warehouse_id", warehouseId,
              "available", Long.toString(current.quantity()), "requested", Long.toString(-delta)));
    }
    if (after < current.reserved()) {
      throw current.stockReserved(after);
    }
    if (after > ProductInventory.MAX_QUANTITY) {
      throw new FailedPreconditionException("STOCK_LIMIT_EXCEEDED",
          "cannot add " + delta + " units of product " + productId + " at warehouse " + warehouseId
              + ": it holds " + current.quantity() + " and may hold at most " + ProductInventory.MAX_QUANTITY,
          Map.of("product_id", productId, "warehouse_id", warehouseId,
              "available", Long.toString(current.quantity()), "requested", Long.toString(delta),
              "max_quantity", Long.toString(ProductInventory.MAX_QUANTITY)));
    }
    return after;
  }

  /** ALREADY_EXISTS REQUEST_ID_REUSED: this request id was applied before to another change of the product. */
  public AlreadyExistsException requestIdReused() {
    return new AlreadyExistsException("REQUEST_ID_REUSED",
        "request_id " + requestId + " was already used for a different stock change of product " + productId,
        Map.of("request_id", requestId, "product_id", productId));
  }
}
