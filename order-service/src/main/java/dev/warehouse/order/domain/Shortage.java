package dev.warehouse.order.domain;

/** One line the inventory could not hold: what was asked for and what was available then. */
public record Shortage(String productId, String warehouseId, long requested, long available) {}
