package dev.warehouse.inventory.domain;

import dev.warehouse.inventory.domain.Reservation.ReleaseCause;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.paging.Page;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The reservations' use cases. Each reads the reservation, decides by its rules ({@link Reservation})
 * what may happen, and asks the repository for one conditional write; a write that finds the reservation
 * changed meanwhile is decided again on what it found, up to {@value #ROUNDS} rounds. Stamps times from
 * the injected clock, and counts every call in {@code reservations_total} by operation and outcome
 * ({@code ok}, or the error's reason).
 */
public final class Reservations {

  /**
   * Rounds of a call whose reservation keeps changing, before ABORTED CONCURRENT_UPDATE: a reservation
   * changes state at most three times (written, confirmed, ended), so a fourth round finds it still.
   */
  public static final int ROUNDS = 4;

  private final ReservationRepository repository;
  private final Clock clock;
  private final Duration defaultHold;
  private final MeterRegistry meters;

  public Reservations(ReservationRepository repository, Clock clock, Duration defaultHold, MeterRegistry meters) {
    this.repository = repository;
    this.clock = clock;
    this.defaultHold = defaultHold;
    this.meters = meters;
  }

  /** W6; {@code hold} empty means the service's default. A repeat with the same lines answers the reservation as it is. */
  public CompletableFuture<Reservation> reserve(String orderId, List<ReservationLine> lines, Optional<Duration> hold) {
    Instant now = clock.instant();
    Reservation wanted = new Reservation(orderId, State.HELD, ReservationLine.merged(lines),
        now.plus(hold.orElse(defaultHold)), Optional.empty(), now, now);
    return counted("reserve", repository.hold(wanted).exceptionally(failure -> {
      if (Failures.cause(failure) instanceof ReservationChangedException changed) {
        return changed.found().orElseThrow(() -> rethrow(failure)).answering(wanted);
      }
      throw rethrow(failure);
    }));
  }

  /** W7: a HELD reservation no longer expires; a CONFIRMED or COMMITTED one is answered as it is. */
  public CompletableFuture<Reservation> confirm(String orderId) {
    return counted("confirm", confirmRound(orderId, clock.instant(), 1));
  }

  private CompletableFuture<Reservation> confirmRound(String orderId, Instant now, int round) {
    return repository.confirm(orderId, now).exceptionallyCompose(failure -> {
      Throwable cause = Failures.cause(failure);
      if (cause instanceof ReservationChangedException changed) {
        return CompletableFuture.completedFuture(changed.found().orElseThrow(() -> Reservation.notFound(orderId)).confirmed());
      }
      if (conflicted(cause) && round < ROUNDS) {
        return confirmRound(orderId, now, round + 1);
      }
      return CompletableFuture.failedFuture(cause);
    });
  }

  /** W8: a CONFIRMED reservation's units leave the warehouse; a COMMITTED one is answered as it is. */
  public CompletableFuture<Reservation> commit(String orderId) {
    Instant now = clock.instant();
    return counted("commit", decide(orderId, 1, found -> {
      Reservation current = found.orElseThrow(() -> Reservation.notFound(orderId));
      if (!current.toCommit()) {
        return CompletableFuture.completedFuture(current);
      }
      return repository.end(current, current.ended(State.COMMITTED, Optional.empty(), now));
    }));
  }

  /**
   * W9 for {@code cause} ({@link Reservation#releasedBy}): gives the units back, or leaves a tombstone for
   * an order that has none; a RELEASED reservation is answered as it is.
   */
  public CompletableFuture<Reservation> release(String orderId, ReleaseCause cause) {
    Instant now = clock.instant();
    return counted("release", decide(orderId, 1, found -> {
      if (found.isEmpty()) {
        return repository.tombstone(Reservation.tombstone(orderId, now));
      }
      Reservation current = found.get();
      if (!current.releasedBy(cause, now)) {
        return CompletableFuture.completedFuture(current);
      }
      return repository.end(current, current.ended(State.RELEASED, Optional.of(cause), now));
    }));
  }

  /**
   * The expiry loop's W9: releases the order's reservation only if it is HELD and its hold expired by
   * {@code now}. Completes with whether this call released it (false: confirmed, released or gone meanwhile).
   */
  public CompletableFuture<Boolean> expire(String orderId, Instant now) {
    return decide(orderId, 1, found -> {
      if (found.isEmpty() || !found.get().releasedBy(ReleaseCause.HOLD_EXPIRED, now)) {
        return CompletableFuture.completedFuture(Optional.<Reservation>empty());
      }
      return repository.end(found.get(), found.get().ended(State.RELEASED, Optional.of(ReleaseCause.HOLD_EXPIRED), now))
          .thenApply(Optional::of);
    }).thenApply(Optional::isPresent);
  }

  public CompletableFuture<Reservation> get(String orderId, boolean consistentRead) {
    return counted("get", repository.find(orderId, consistentRead)
        .thenApply(found -> found.orElseThrow(() -> Reservation.notFound(orderId))));
  }

  public CompletableFuture<Page<Reservation>> listExpiredHolds(PageQuery page) {
    return listExpiredHolds(page, clock.instant());
  }

  /** A9 as of {@code now} (the expiry loop's sweep start). */
  public CompletableFuture<Page<Reservation>> listExpiredHolds(PageQuery page, Instant now) {
    return repository.listExpiredHolds(page, now);
  }

  /**
   * Reads the reservation strongly and runs {@code decision} on it; when the write it chose finds the
   * reservation changed, decides again on what is there now.
   */
  private <T> CompletableFuture<T> decide(String orderId, int round,
      Function<Optional<Reservation>, CompletableFuture<T>> decision) {
    return repository.find(orderId, true).thenCompose(decision).exceptionallyCompose(failure -> {
      Throwable cause = Failures.cause(failure);
      if (!(cause instanceof ReservationChangedException) && !conflicted(cause)) {
        return CompletableFuture.failedFuture(cause);
      }
      if (round >= ROUNDS) {
        return CompletableFuture.failedFuture(new AbortedException("CONCURRENT_UPDATE",
            "order " + orderId + "'s reservation kept changing concurrently; retry", Map.of("order_id", orderId)));
      }
      return decide(orderId, round + 1, decision);
    });
  }

  /**
   * A write cancelled by a conflicting transaction once the data layer's attempts were spent: nothing was
   * written, so deciding again from a fresh read is safe (every write is conditioned on what it read).
   */
  private static boolean conflicted(Throwable cause) {
    return cause instanceof AbortedException aborted && aborted.reason().equals("TRANSACTION_CONFLICT");
  }

  private static RuntimeException rethrow(Throwable failure) {
    Throwable cause = Failures.cause(failure);
    return cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
  }

  private <T> CompletableFuture<T> counted(String operation, CompletableFuture<T> call) {
    return call.whenComplete((ok, failure) -> Counter.builder("reservations")
        .description("reservation calls by operation and outcome (ok, or the error's reason)")
        .tags("operation", operation, "outcome", failure == null ? "ok" : outcome(failure))
        .register(meters)
        .increment());
  }

  private static String outcome(Throwable failure) {
    return Failures.cause(failure) instanceof ClientFacingException se ? se.reason() : "INTERNAL";
  }
}
