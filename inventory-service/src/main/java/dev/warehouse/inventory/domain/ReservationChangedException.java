package dev.warehouse.inventory.domain;

import java.util.Optional;

/**
 * A reservation write found the reservation other than the write was conditioned on; carries it as found
 * (empty: there is none). Never reaches a caller: {@link Reservations} reads what was found and decides
 * again, and gives up with ABORTED CONCURRENT_UPDATE after a bounded number of rounds.
 */
public final class ReservationChangedException extends RuntimeException {

  private final transient Optional<Reservation> found;

  public ReservationChangedException(String orderId, Optional<Reservation> found) {
    super("order " + orderId + "'s reservation changed concurrently", null, false, false);
    this.found = found;
  }

  /** The reservation as the failed write found it. */
  public Optional<Reservation> found() {
    return found;
  }
}
