package dev.warehouse.order.domain;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The inventory-service's reservations, as the order flow needs them: the stock of an order held, confirmed,
 * committed or released, each idempotent by the order's id, so any of them may be repeated after a crash
 * or a lost answer. Calls made during a gRPC call carry its deadline and cancellation.
 *
 * <p>Failures: {@link OutOfStockException} (reserve), {@link NotStockedException} (reserve: a line's product is
 * not stocked at its warehouse), a {@code FailedPreconditionException} of reason {@link #RELEASED} (the
 * reservation was released: its hold expired, or a release came first), {@link #CONFIRMED} (a rejection's
 * release found the reservation confirmed: the order was placed), {@link #COMMITTED} or {@link #TOO_LARGE}
 * (reserve: nothing held, and asking again would not help); anything
 * else (the inventory unreachable, its circuit open, the deadline passed) leaves the outcome unknown.
 */
public interface StockReservations {

  /** The reason of the FAILED_PRECONDITION of a step on a released reservation. */
  String RELEASED = "RESERVATION_RELEASED";
  /** The reason of the FAILED_PRECONDITION of a release of a committed reservation. */
  String COMMITTED = "RESERVATION_COMMITTED";
  /** The reason of the FAILED_PRECONDITION of a rejection's release (the fence) of a confirmed reservation. */
  String CONFIRMED = "RESERVATION_CONFIRMED";
  /**
   * The reason of the FAILED_PRECONDITION of a hold whose lines of split stock would need more items than
   * one DynamoDB transaction takes (100): nothing was held.
   */
  String TOO_LARGE = "RESERVATION_TOO_LARGE";

  /** Why an order's stock is released: the inventory lets only a cancellation free a confirmed reservation. */
  enum Cause {
    /** The order was rejected or abandoned, never placed: a fence that releases a hold, never a confirm. */
    ORDER_REJECTED,
    /** The placed order was cancelled: its confirmed reservation is released. */
    ORDER_CANCELLED
  }

  /** Where an order's reservation is in its life; TOMBSTONE: released before anything was held (a fence). */
  enum State { HELD, CONFIRMED, COMMITTED, RELEASED, TOMBSTONE }

  /**
   * Holds every line or none, for {@code hold} unless confirmed; completes with the reservation's state
   * (HELD, or later on a replay).
   */
  CompletableFuture<State> reserve(String orderId, List<OrderLine> lines, java.time.Duration hold);

  /** A HELD reservation no longer expires; completes with its state. */
  CompletableFuture<State> confirm(String orderId);

  /** The order shipped: its units leave the warehouse. */
  CompletableFuture<State> commit(String orderId);

  /**
   * Gives the order's held stock back for {@code cause}, or leaves a tombstone that a late reserve fails
   * on. For ORDER_REJECTED, fails with {@link #CONFIRMED} when the reservation is confirmed.
   */
  CompletableFuture<State> release(String orderId, Cause cause);

  /** The order's reservation, read strongly; empty when it has none. */
  CompletableFuture<Optional<State>> find(String orderId);
}
