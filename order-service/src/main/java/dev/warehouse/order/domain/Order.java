package dev.warehouse.order.domain;

import java.time.Instant;
import java.time.LocalDate;

/**
 * A customer's order. {@code version} starts at 1 and grows by one with every change; both stored
 * copies always carry the same version.
 */
public record Order(
    String orderId,
    String customerId,
    LocalDate orderDate,
    OrderStatus status,
    Money total,
    long version,
    Instant createTime,
    Instant updateTime) {

  /** This order moved to {@code next}, one version later. */
  public Order movedTo(OrderStatus next, Instant now) {
    return new Order(orderId, customerId, orderDate, next, total, version + 1, createTime, now);
  }
}
