package dev.warehouse.inventory.reservation;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The stock held for one order, named by the order's id.
 *
 * @param lines          merged by product and warehouse, in that order; empty for a tombstone
 * @param holdExpireTime when a HELD reservation is released unless confirmed
 */
public record Reservation(String orderId, State state, List<ReservationLine> lines, Instant holdExpireTime,
    Optional<ReleaseCause> releaseCause, Instant createTime, Instant updateTime) {

  /** Where a reservation is in its life: HELD, then CONFIRMED, then COMMITTED; HELD or CONFIRMED may become RELEASED. */
  public enum State { HELD, CONFIRMED, COMMITTED, RELEASED }

  /** Why a reservation was released. */
  public enum ReleaseCause { REQUESTED, HOLD_EXPIRED, BEFORE_RESERVE }

  public Reservation {
    lines = List.copyOf(lines);
  }

  /** Whether its units are held (taken from available, not yet gone). */
  public boolean holds() {
    return state == State.HELD || state == State.CONFIRMED;
  }
}
