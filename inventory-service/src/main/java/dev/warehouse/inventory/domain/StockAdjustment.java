package dev.warehouse.inventory.domain;

/** A change of stock, applied at most once per {@code requestId}. */
public record StockAdjustment(String productId, String warehouseId, long delta, String requestId) {}
