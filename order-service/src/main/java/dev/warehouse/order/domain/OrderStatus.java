package dev.warehouse.order.domain;

import java.util.EnumSet;
import java.util.Set;

/**
 * An order's life cycle. The order-service alone moves PENDING to PLACED (its stock is held) or to
 * REJECTED (it could not be). Callers move PLACED → PAID → SHIPPED → DELIVERED, and PLACED or PAID →
 * CANCELLED; every other change (including staying put) is refused.
 */
public enum OrderStatus {
  PLACED, PAID, SHIPPED, DELIVERED, CANCELLED, PENDING, REJECTED;

  /** The statuses a caller may move this one to. */
  public Set<OrderStatus> next() {
    return switch (this) {
      case PLACED -> EnumSet.of(PAID, CANCELLED);
      case PAID -> EnumSet.of(SHIPPED, CANCELLED);
      case SHIPPED -> EnumSet.of(DELIVERED);
      case DELIVERED, CANCELLED, PENDING, REJECTED -> EnumSet.noneOf(OrderStatus.class);
    };
  }

  public boolean canMoveTo(OrderStatus target) {
    return next().contains(target);
  }

  /** The stock step a caller's move to this status owes the inventory, if any. */
  public java.util.Optional<StockStep> stockStep() {
    return switch (this) {
      case CANCELLED -> java.util.Optional.of(StockStep.RELEASE);
      case SHIPPED -> java.util.Optional.of(StockStep.COMMIT);
      default -> java.util.Optional.empty();
    };
  }
}
