package dev.warehouse.order.domain;

import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.NotFoundException;
import dev.warehouse.runtime.paging.Page;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/** The order use cases, in plain Java. Inputs arrive validated. */
public final class OrderService {

  /** Read-modify-write rounds of a status change without expected_version, before giving up with ABORTED. */
  public static final int STATUS_CHANGE_ROUNDS = 3;

  private final OrderRepository repository;
  private final Clock clock;

  public OrderService(OrderRepository repository, Clock clock) {
    this.repository = repository;
    this.clock = clock;
  }

  public CompletableFuture<Order> placeOrder(PlaceOrderCommand command) {
    Instant now = clock.instant();
    Order order = new Order(
        command.orderId().orElseGet(() -> "O-" + UUID.randomUUID()),
        command.customerId(),
        command.orderDate().orElseGet(() -> LocalDate.ofInstant(now, ZoneOffset.UTC)),
        OrderStatus.PLACED,
        command.total(),
        1,
        now,
        now);
    return repository.create(order, command, now);
  }

  public CompletableFuture<Order> getOrder(String orderId, boolean consistentRead) {
    return repository.find(orderId, consistentRead).thenApply(found -> found.orElseThrow(() -> notFound(orderId)));
  }

  public CompletableFuture<Page<Order>> listCustomerOrders(String customerId, OrderPageQuery query) {
    return repository.listByCustomer(customerId, query);
  }

  /**
   * Moves an order to {@code next}. With an expected version, one round: a mismatch is ABORTED. Without
   * one, a concurrent change makes us read again and re-check the transition, up to
   * {@value #STATUS_CHANGE_ROUNDS} rounds.
   */
  public CompletableFuture<Order> updateOrderStatus(String orderId, OrderStatus next, Optional<Long> expectedVersion) {
    return updateRound(orderId, next, expectedVersion, 1);
  }

  private CompletableFuture<Order> updateRound(String orderId, OrderStatus next, Optional<Long> expectedVersion, int round) {
    return repository.find(orderId, true)
        .thenCompose(found -> {
          Order current = found.orElseThrow(() -> notFound(orderId));
          if (expectedVersion.isPresent() && expectedVersion.get() != current.version()) {
            throw versionMismatch(orderId, expectedVersion.get(), current.version());
          }
          if (!current.status().canMoveTo(next)) {
            throw new FailedPreconditionException("INVALID_STATUS_TRANSITION",
                "order " + orderId + " cannot move from " + current.status() + " to " + next,
                Map.of("order_id", orderId, "from", current.status().name(), "to", next.name()));
          }
          return repository.updateStatus(current, next, clock.instant());
        })
        .exceptionallyCompose(failure -> {
          Throwable cause = Failures.cause(failure);
          if (!(cause instanceof StaleOrderException)) {
            return CompletableFuture.failedFuture(cause);
          }
          if (expectedVersion.isPresent()) {
            return CompletableFuture.failedFuture(new AbortedException("VERSION_MISMATCH",
                "order " + orderId + " is no longer at version " + expectedVersion.get(),
                Map.of("order_id", orderId, "expected_version", Long.toString(expectedVersion.get()))));
          }
          if (round >= STATUS_CHANGE_ROUNDS) {
            return CompletableFuture.failedFuture(new AbortedException("CONCURRENT_UPDATE",
                "order " + orderId + " kept changing concurrently; retry", Map.of("order_id", orderId)));
          }
          return updateRound(orderId, next, expectedVersion, round + 1);
        });
  }

  private static AbortedException versionMismatch(String orderId, long expected, long actual) {
    return new AbortedException("VERSION_MISMATCH",
        "order " + orderId + " is at version " + actual + ", not " + expected,
        Map.of("order_id", orderId, "expected_version", Long.toString(expected), "current_version", Long.toString(actual)));
  }

  private static NotFoundException notFound(String orderId) {
    return new NotFoundException("ORDER_NOT_FOUND", "no order has id " + orderId, Map.of("order_id", orderId));
  }
}
