package dev.warehouse.inventory.domain;

import dev.warehouse.runtime.paging.Page;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Storage of reservations and the stock they hold. Each write is one atomic, conditional change: of the
 * reservation and, when units move, of every line's stock record with it. It decides nothing: which
 * state may become which, and for whom, is {@link Reservations}'s; a write whose condition no longer
 * holds says so, carrying what it found, and the caller decides again.
 *
 * <p>A write that only lost a race on a stock record (another order's hold changed it) is tried again
 * inside the repository, on the record read anew; only a change of the reservation itself reaches the
 * caller, as {@link ReservationChangedException}.
 */
public interface ReservationRepository {

  /** A8: the order's reservation. */
  CompletableFuture<Optional<Reservation>> find(String orderId, boolean consistentRead);

  /**
   * W6: writes {@code held} (HELD), conditioned on the order having no reservation
   * ({@code attribute_not_exists(PK)}), and takes each line's units from its stock's available, each
   * conditioned on having them: all or nothing.
   *
   * @throws ReservationChangedException the order has a reservation (carried: a replay, a tombstone, other lines)
   * @throws dev.warehouse.runtime.error.FailedPreconditionException OUT_OF_STOCK, naming each short line; nothing written
   * @throws dev.warehouse.runtime.error.NotFoundException PRODUCT_INVENTORY_NOT_FOUND for a line not stocked
   */
  CompletableFuture<Reservation> hold(Reservation held);

  /**
   * W7: HELD to CONFIRMED ({@code #st = :held}), which also takes it off A9.
   *
   * @throws ReservationChangedException it is not HELD (carried as found, or none)
   */
  CompletableFuture<Reservation> confirm(String orderId, Instant now);

  /**
   * W8, W9: ends what {@code current} holds, conditioned on its state being {@code current}'s. To
   * COMMITTED: each line's units leave (on hand and reserved drop); to RELEASED: they are available again.
   *
   * @throws ReservationChangedException its state moved on since {@code current} was read
   */
  CompletableFuture<Reservation> end(Reservation current, Reservation next);

  /**
   * W9 for an order with no reservation: puts {@code tombstone} (RELEASED, no lines), conditioned on
   * there being none, so that a late hold fails.
   *
   * @throws ReservationChangedException a reservation was written first (carried)
   */
  CompletableFuture<Reservation> tombstone(Reservation tombstone);

  /** A9: HELD reservations whose hold expired by {@code now}, oldest first. Eventually consistent. */
  CompletableFuture<Page<Reservation>> listExpiredHolds(PageQuery page, Instant now);
}
