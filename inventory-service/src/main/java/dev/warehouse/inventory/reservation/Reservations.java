package dev.warehouse.inventory.reservation;

import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.reservation.Reservation.ReleaseCause;
import dev.warehouse.inventory.reservation.Reservation.State;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.ServiceException;
import dev.warehouse.runtime.paging.Page;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The reservations' use cases: stamps times from the injected clock, and counts every call in
 * {@code reservations_total} by operation and outcome ({@code ok}, or the error's reason).
 */
public final class Reservations {

  private final DynamoReservations store;
  private final Clock clock;
  private final Duration defaultHold;
  private final MeterRegistry meters;

  public Reservations(DynamoReservations store, Clock clock, Duration defaultHold, MeterRegistry meters) {
    this.store = store;
    this.clock = clock;
    this.defaultHold = defaultHold;
    this.meters = meters;
  }

  /** W6; {@code hold} empty means the service's default. */
  public CompletableFuture<Reservation> reserve(String orderId, List<ReservationLine> lines, Optional<Duration> hold) {
    Instant now = clock.instant();
    Reservation wanted = new Reservation(orderId, State.HELD, ReservationLine.merged(lines),
        now.plus(hold.orElse(defaultHold)), Optional.empty(), now, now);
    return counted("reserve", store.reserve(wanted));
  }

  public CompletableFuture<Reservation> confirm(String orderId) {
    return counted("confirm", store.confirm(orderId, clock.instant()));
  }

  public CompletableFuture<Reservation> commit(String orderId) {
    return counted("commit", store.commit(orderId, clock.instant()));
  }

  public CompletableFuture<Reservation> release(String orderId) {
    return counted("release", store.release(orderId, ReleaseCause.REQUESTED, clock.instant()).thenApply(Optional::orElseThrow));
  }

  public CompletableFuture<Reservation> get(String orderId, boolean consistentRead) {
    return counted("get", store.find(orderId, consistentRead)
        .thenApply(found -> found.orElseThrow(() -> Reservation.notFound(orderId))));
  }

  public CompletableFuture<Page<Reservation>> listExpiredHolds(PageQuery page) {
    return store.listExpiredHolds(page, clock.instant());
  }

  private <T> CompletableFuture<T> counted(String operation, CompletableFuture<T> call) {
    return call.whenComplete((ok, failure) -> Counter.builder("reservations")
        .description("reservation calls by operation and outcome (ok, or the error's reason)")
        .tags("operation", operation, "outcome", failure == null ? "ok" : outcome(failure))
        .register(meters)
        .increment());
  }

  private static String outcome(Throwable failure) {
    return Failures.cause(failure) instanceof ServiceException se ? se.reason() : "INTERNAL";
  }
}
