package dev.warehouse.order.recovery;

import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderService;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.log.Events;
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
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The order-service's recovery loop: every period it lists the orders whose stock step is overdue (A10,
 * never a Scan) and finishes each ({@link OrderService#recover}), one page after another, the orders of a
 * page at once. A round never overlaps the previous one. Every instance runs it: two instances finishing
 * the same order agree, since each step is idempotent and each write is conditioned on the order's
 * version.
 *
 * <p>Metrics: {@code order_recoveries_total{step, outcome}} (outcome {@code finished} or {@code failed}) and
 * {@code order_stock_step_oldest_overdue_seconds}, how far past due the most overdue order was at the
 * last round's start (0 when none); {@code order_stock_steps_overdue}, how many were due then (one poison
 * order raises a ticket, many stuck orders page); and
 * {@code order_recovery_last_success_timestamp_seconds}, when a round last listed every page (the
 * process's start until then), so a listing that keeps failing is seen even though the gauges above keep
 * their last value.
 */
public final class OrderRecovery implements AutoCloseable {

  /** The most orders one page asks for. */
  static final int PAGE_SIZE = 100;

  private static final Logger log = LoggerFactory.getLogger(OrderRecovery.class);

  private final OrderService service;
  private final Clock clock;
  private final MeterRegistry meters;
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicLong oldestOverdueSeconds = new AtomicLong();
  private final AtomicLong overdue = new AtomicLong();
  private final AtomicLong lastSuccessMillis;
  private volatile ScheduledFuture<?> periodic;

  public OrderRecovery(OrderService service, Clock clock, MeterRegistry meters) {
    this.service = service;
    this.clock = clock;
    this.meters = meters;
    Gauge.builder("order.stock.step.oldest.overdue", oldestOverdueSeconds, AtomicLong::get)
        .description("how far past due the most overdue stock step was at the last recovery round")
        .baseUnit("seconds").register(meters);
    lastSuccessMillis = new AtomicLong(clock.millis());
    Gauge.builder("order.stock.steps.overdue", overdue, AtomicLong::get)
        .description("how many orders owed a stock step past its due time at the last recovery round").register(meters);
    Gauge.builder("order.recovery.last.success.timestamp", lastSuccessMillis, t -> t.get() / 1000.0)
        .description("when a recovery round last listed every overdue order (the process's start until then)")
        .baseUnit("seconds").register(meters);
  }

  /** Runs a round every {@code period} on {@code scheduler} (whose thread it never blocks). */
  public OrderRecovery start(ScheduledExecutorService scheduler, Duration period) {
    periodic = scheduler.scheduleWithFixedDelay(this::roundFromTimer, period.toMillis(), period.toMillis(),
        TimeUnit.MILLISECONDS);
    return this;
  }

  private void roundFromTimer() {
    try {
      round();
    } catch (RuntimeException e) { // a periodic task that throws is never run again
      Events.warn(log, "order_recovery_failed").setCause(e).log();
    }
  }

  /**
   * One round, unless one is still running: completes with how many orders it finished, once every page
   * is done. Failures of single orders are counted and logged, and leave them for the next round.
   */
  public CompletableFuture<Integer> round() {
    if (!running.compareAndSet(false, true)) {
      return CompletableFuture.completedFuture(0);
    }
    Instant started = clock.instant();
    AtomicLong finished = new AtomicLong();
    AtomicLong listed = new AtomicLong();
    return asFuture(() -> page("", started, finished, listed, true))
        .handle((ok, failure) -> {
          running.set(false);
          if (failure == null) {
            overdue.set(listed.get());
            lastSuccessMillis.set(clock.millis());
          } else {
            Events.warn(log, "order_recovery_round_failed").addKeyValue("detail", Failures.cause(failure).getMessage())
                .log();
          }
          return (int) finished.get();
        });
  }

  private CompletableFuture<Void> page(String token, Instant started, AtomicLong finished, AtomicLong listed,
      boolean first) {
    return service.listStalledOrders(PAGE_SIZE, token).thenCompose(page -> {
      List<Order> orders = page.items();
      listed.addAndGet(orders.size());
      if (first) {
        // Set once the first page is in, never before (a scrape between would read 0 and reset the alert's
        // timer), and left as it was when the listing fails (the stuck orders are still stuck).
        oldestOverdueSeconds.set(orders.isEmpty() || orders.get(0).pending().isEmpty() ? 0
            : Math.max(0, Duration.between(orders.get(0).pending().get().due(), started).getSeconds()));
      }
      CompletableFuture<?>[] each = orders.stream().map(order -> recoverOne(order, finished)).toArray(CompletableFuture[]::new);
      return CompletableFuture.allOf(each).thenCompose(done -> page.nextPageToken().isEmpty()
          ? CompletableFuture.completedFuture(null) : page(page.nextPageToken(), started, finished, listed, false));
    });
  }

  private CompletableFuture<Void> recoverOne(Order listed, AtomicLong finished) {
    String step = listed.pending().map(p -> p.step().name().toLowerCase(java.util.Locale.ROOT)).orElse("none");
    return asFuture(() -> service.recover(listed.orderId())).handle((order, failure) -> {
      String outcome = failure == null ? "finished" : "failed";
      Counter.builder("order.recoveries").description("overdue stock steps the recovery finished or tried to")
          .tags("step", step, "outcome", outcome).register(meters).increment();
      if (failure == null) {
        finished.incrementAndGet();
        Events.info(log, "order_recovered").addKeyValue("order_id", listed.orderId()).addKeyValue("step", step)
            .addKeyValue("status", order == null ? "gone" : order.status().name()).log();
      } else {
        Events.warn(log, "order_recovery_deferred").addKeyValue("order_id", listed.orderId()).addKeyValue("step", step)
            .addKeyValue("detail", Failures.cause(failure).getMessage()).log();
      }
      return null;
    });
  }

  /**
   * {@code call}'s future, or a failed one when it throws instead: a throw would otherwise skip the rest of
   * the page, or leave the round marked running, so that no later round ever ran.
   */
  private static <T> CompletableFuture<T> asFuture(Supplier<CompletableFuture<T>> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public void close() {
    if (periodic != null) {
      periodic.cancel(false);
    }
  }
}
