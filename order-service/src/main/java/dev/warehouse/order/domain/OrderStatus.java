package dev.warehouse.order.domain;

import java.util.EnumSet;
import java.util.Set;

/**
 * An order's life cycle: PLACED → PAID → SHIPPED → DELIVERED, and PLACED or PAID → CANCELLED. Every
 * other change (including staying put) is refused.
 */
public enum OrderStatus {
  PLACED, PAID, SHIPPED, DELIVERED, CANCELLED;

  /** The statuses this one may move to. */
  public Set<OrderStatus> next() {
    return switch (this) {
      case PLACED -> EnumSet.of(PAID, CANCELLED);
      case PAID -> EnumSet.of(SHIPPED, CANCELLED);
      case SHIPPED -> EnumSet.of(DELIVERED);
      case DELIVERED, CANCELLED -> EnumSet.noneOf(OrderStatus.class);
    };
  }

  public boolean canMoveTo(OrderStatus target) {
    return next().contains(target);
  }
}
