package dev.warehouse.inventory.expiry;

import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.Reservations;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.paging.Page;
import io.grpc.Context;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The expiry loop: every sweep period, lists the holds past their expiry (A9) and releases each one
 * (W9, cause HOLD_EXPIRED), only if it is still HELD when the release is written, so a confirm that won
 * the race is never undone. Runs on the process's timer thread, which it never blocks: a sweep only
 * starts asynchronous calls, and a sweep still running when the next is due is not doubled. A hold whose
 * release fails is logged ({@code event=hold_release_deferred}) and left for the next sweep; the sweep goes on.
 *
 * <p>Metrics: {@code reservation_holds_expired_total} (holds this process released), and
 * {@code reservation_expired_hold_age_seconds}, how long the oldest hold the last sweep found had been
 * past its expiry (0 when none): it grows when releases fall behind; and
 * {@code reservation_expiry_last_success_timestamp_seconds}, when a sweep last went through every page
 * (the process's start until then), so a listing that keeps failing is seen though the age keeps its value.
 */
public final class HoldExpiry implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HoldExpiry.class);
  /** Holds listed per page; their releases run at once. */
  static final int PAGE_SIZE = 100;

  private final Reservations reservations;
  private final Clock clock;
  private final Duration period;
  private final ScheduledExecutorService scheduler;
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicLong oldestAgeMillis = new AtomicLong();
  private final AtomicLong lastSuccessMillis;
  private final Counter expired;
  private volatile ScheduledFuture<?> schedule;

  /** @param scheduler the process's timer: sweeps start there, and their deadlines fire there */
  public HoldExpiry(Reservations reservations, Clock clock, Duration period, ScheduledExecutorService scheduler,
      MeterRegistry meters) {
    this.reservations = reservations;
    this.scheduler = scheduler;
    this.clock = clock;
    this.period = period;
    this.expired = Counter.builder("reservation.holds.expired")
        .description("holds released by the expiry loop because they were not confirmed in time")
        .register(meters);
    Gauge.builder("reservation.expired.hold.age", oldestAgeMillis, age -> age.get() / 1000.0)
        .description("how long the oldest hold found past its expiry by the last sweep had been expired")
        .baseUnit("seconds")
        .register(meters);
    lastSuccessMillis = new AtomicLong(clock.millis());
    Gauge.builder("reservation.expiry.last.success.timestamp", lastSuccessMillis, t -> t.get() / 1000.0)
        .description("when an expiry sweep last went through every expired hold (the process's start until then)")
        .baseUnit("seconds")
        .register(meters);
  }

  /** Sweeps every period, first after one period. */
  public HoldExpiry start() {
    schedule = scheduler.scheduleWithFixedDelay(() -> {
      try {
        sweep();
      } catch (RuntimeException e) { // a periodic task that throws is never run again
        Events.warn(log, "hold_sweep_failed").setCause(e).log();
      }
    }, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  /**
   * One sweep: every hold expired by now, page by page; completes with how many it released once each
   * is released (or was confirmed or released meanwhile, or its release failed, for the next sweep), and
   * fails when a page could not be listed. Skipped, completing at once, while the previous one still runs.
   */
  public CompletableFuture<Integer> sweep() {
    if (!running.compareAndSet(false, true)) {
      return CompletableFuture.completedFuture(0);
    }
    Instant now = clock.instant();
    // A sweep gets at most a few periods; then the next one starts over from A9.
    Context.CancellableContext context = Context.ROOT.withDeadlineAfter(Math.max(period.toMillis() * 3, 30_000),
        TimeUnit.MILLISECONDS, scheduler);
    CompletableFuture<Integer> done;
    Context previous = context.attach();
    try {
      done = page("", now, true, 0);
    } catch (RuntimeException e) { // thrown, not failed: still this sweep's end, or running stays set for good
      done = CompletableFuture.failedFuture(e);
    } finally {
      context.detach(previous);
    }
    return done.whenComplete((released, failure) -> {
      context.cancel(null);
      running.set(false);
      if (failure != null) {
        Events.warn(log, "hold_sweep_failed").setCause(failure).log();
        return;
      }
      lastSuccessMillis.set(clock.millis());
      if (released > 0) {
        Events.info(log, "holds_expired").addKeyValue("released", released).log();
      }
    });
  }

  private CompletableFuture<Integer> page(String token, Instant now, boolean first, int releasedSoFar) {
    return reservations.listExpiredHolds(new PageQuery(PAGE_SIZE, token, false), now).thenCompose((Page<Reservation> page) -> {
      if (first) {
        oldestAgeMillis.set(page.items().isEmpty() ? 0
            : Math.max(0, Duration.between(page.items().get(0).holdExpireTime(), now).toMillis()));
      }
      List<CompletableFuture<Boolean>> releases = page.items().stream()
          .map(hold -> release(hold, now))
          .toList();
      return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)).thenCompose(all -> {
        int released = releasedSoFar + (int) releases.stream().filter(CompletableFuture::join).count();
        expired.increment(released - releasedSoFar);
        return page.nextPageToken().isEmpty() ? CompletableFuture.completedFuture(released)
            : page(page.nextPageToken(), now, false, released);
      });
    });
  }

  /**
   * Releases one expired hold; completes with whether it did. A failure (thrown or failed) is logged and
   * completes with false: the hold stays expired, for the next sweep, and the rest of the sweep goes on.
   */
  private CompletableFuture<Boolean> release(Reservation hold, Instant now) {
    CompletableFuture<Boolean> released;
    try {
      released = reservations.expire(hold.orderId(), now);
    } catch (RuntimeException e) {
      released = CompletableFuture.failedFuture(e);
    }
    return released.handle((ok, failure) -> {
      if (failure == null) {
        return ok;
      }
      Events.warn(log, "hold_release_deferred").addKeyValue("order_id", hold.orderId())
          .addKeyValue("detail", Failures.cause(failure).getMessage()).log();
      return false;
    });
  }

  @Override
  public void close() {
    ScheduledFuture<?> s = schedule;
    if (s != null) {
      s.cancel(false);
    }
  }
}
