package dev.warehouse.inventory.domain;

import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.NotFoundException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
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

  /**
   * Why a reservation was released. REQUESTED is kept only on reservations released before callers said
   * why; a caller now says ORDER_REJECTED (a fence: never undoes a confirm) or ORDER_CANCELLED.
   */
  public enum ReleaseCause { REQUESTED, HOLD_EXPIRED, BEFORE_RESERVE, ORDER_CANCELLED, ORDER_REJECTED }

  public Reservation {
    lines = List.copyOf(lines);
  }

  /** Whether its units are held (taken from available, not yet gone). */
  public boolean holds() {
    return state == State.HELD || state == State.CONFIRMED;
  }

  /**
   * What this reservation, found for the order, means for a ReserveStock of {@code wanted}: a retry
   * (the same lines) is answered with it as it is, no stock touched.
   *
   * @throws FailedPreconditionException RESERVATION_RELEASED
   * @throws AlreadyExistsException      RESERVATION_MISMATCH, when it holds other lines
   */
  public Reservation answering(Reservation wanted) {
    if (state == State.RELEASED) {
      throw released(orderId);
    }
    if (!lines.equals(wanted.lines())) {
      throw new AlreadyExistsException("RESERVATION_MISMATCH",
          "order " + wanted.orderId() + " already holds other lines", Map.of("order_id", wanted.orderId()));
    }
    return this;
  }

  /** Whether a ReserveStock of {@code wanted} that found this reservation is a replay of it. */
  public boolean isReplayOf(Reservation wanted) {
    return state != State.RELEASED && lines.equals(wanted.lines());
  }

  /**
   * This reservation, as a ConfirmReservation that found it no longer HELD answers it (CONFIRMED or
   * COMMITTED: as it is).
   *
   * @throws FailedPreconditionException RESERVATION_RELEASED
   */
  public Reservation confirmed() {
    if (state == State.RELEASED) {
      throw released(orderId);
    }
    return this;
  }

  /**
   * Whether a CommitReservation has anything to do: false once COMMITTED (a retry), true when CONFIRMED.
   *
   * @throws FailedPreconditionException RESERVATION_NOT_CONFIRMED (HELD) or RESERVATION_RELEASED
   */
  public boolean toCommit() {
    switch (state) {
      case COMMITTED:
        return false;
      case HELD:
        throw new FailedPreconditionException("RESERVATION_NOT_CONFIRMED",
            "order " + orderId + "'s reservation is not confirmed: confirm it before committing it",
            Map.of("order_id", orderId));
      case RELEASED:
        throw released(orderId);
      default:
        return true;
    }
  }

  /**
   * Whether a release for {@code cause} gives this reservation's units back now (true), or answers it as
   * it is (false: already RELEASED; or, for the expiry loop, confirmed or not yet expired). Only a
   * cancellation frees a CONFIRMED reservation: a rejection is a fence, and a confirm that won the race
   * means the order was placed.
   *
   * @throws FailedPreconditionException RESERVATION_CONFIRMED (a fence on a confirmed hold) or
   *     RESERVATION_COMMITTED (its stock already left)
   */
  public boolean releasedBy(ReleaseCause cause, Instant now) {
    if (state == State.RELEASED) {
      return false;
    }
    if (cause == ReleaseCause.HOLD_EXPIRED) {
      return state == State.HELD && !holdExpireTime.isAfter(now);
    }
    if (state == State.COMMITTED) {
      throw new FailedPreconditionException("RESERVATION_COMMITTED",
          "order " + orderId + "'s stock already left the warehouse: its reservation cannot be released",
          Map.of("order_id", orderId));
    }
    if (state == State.CONFIRMED && cause != ReleaseCause.ORDER_CANCELLED) {
      throw new FailedPreconditionException("RESERVATION_CONFIRMED",
          "order " + orderId + "'s reservation is confirmed: its order was placed, and only its cancellation releases it",
          Map.of("order_id", orderId));
    }
    return true;
  }

  /** This reservation as it ends (COMMITTED or RELEASED): no longer listed as a hold. */
  public Reservation ended(State next, Optional<ReleaseCause> cause, Instant now) {
    return new Reservation(orderId, next, lines, holdExpireTime, cause, createTime, now);
  }

  /** This reservation with {@code held}: its lines as the store took them (equal to its own, with their takes). */
  public Reservation withLines(List<ReservationLine> held) {
    return new Reservation(orderId, state, held, holdExpireTime, releaseCause, createTime, updateTime);
  }

  /** A release of an order that has no reservation: RELEASED, no lines, so that a late ReserveStock fails. */
  public static Reservation tombstone(String orderId, Instant now) {
    return new Reservation(orderId, State.RELEASED, List.of(), now, Optional.of(ReleaseCause.BEFORE_RESERVE), now, now);
  }

  /** NOT_FOUND RESERVATION_NOT_FOUND. */
  public static NotFoundException notFound(String orderId) {
    return new NotFoundException("RESERVATION_NOT_FOUND", "order " + orderId + " has no reservation",
        Map.of("order_id", orderId));
  }

  private static FailedPreconditionException released(String orderId) {
    return new FailedPreconditionException("RESERVATION_RELEASED",
        "order " + orderId + "'s reservation was released (cancelled, rejected or expired): it holds nothing",
        Map.of("order_id", orderId));
  }
}
