package dev.warehouse.order.domain;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

/**
 * A customer's order. {@code version} is 0 while it is PENDING, 1 once it is PLACED (or REJECTED), and
 * grows by one with every change of status after that; both stored copies always carry the same version.
 *
 * @param lines     its lines, merged; empty when read from the customer copy (A5 lists summaries)
 * @param lineCount how many lines it has (the customer copy knows this much)
 * @param rejection why it was not placed, for a REJECTED order
 * @param pending   the stock step it still owes the inventory, if any (only the direct copy knows)
 */
public record Order(
    String orderId,
    String customerId,
    LocalDate orderDate,
    OrderStatus status,
    Money total,
    long version,
    Instant createTime,
    Instant updateTime,
    List<OrderLine> lines,
    int lineCount,
    Optional<Rejection> rejection,
    Optional<PendingStep> pending) {

  public Order {
    lines = List.copyOf(lines);
  }

  /** This order moved to {@code next}, one version later, owing {@code step} (or nothing). */
  public Order movedTo(OrderStatus next, Instant now, Optional<PendingStep> step) {
    return new Order(orderId, customerId, orderDate, next, total, version + 1, createTime, now, lines, lineCount,
        rejection, step);
  }

  /** This order REJECTED for {@code why}, one version later, owing nothing (its stock was released first). */
  public Order rejected(Rejection why, Instant now) {
    return new Order(orderId, customerId, orderDate, OrderStatus.REJECTED, total, version + 1, createTime, now, lines,
        lineCount, Optional.of(why), Optional.empty());
  }

  /** The same order owing nothing more. */
  public Order stepDone() {
    return new Order(orderId, customerId, orderDate, status, total, version, createTime, updateTime, lines, lineCount,
        rejection, Optional.empty());
  }

  /** Whether it has stock lines (orders placed before lines existed have none, and owe no stock step). */
  public boolean buysStock() {
    return lineCount > 0;
  }
}
