package dev.warehouse.bench.load;

import dev.warehouse.bench.stats.LatencyStats;
import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.HdrHistogram.Histogram;

/**
 * Open loop: requests arrive at a fixed rate whatever the system does, as real callers do. Latency
 * is measured from each request's <em>intended</em> start, not from when the generator got round to
 * sending it, which corrects coordinated omission: a stall delays every request due during it, and
 * each of those waits counts (wrk2's method).
 */
public final class OpenLoop {

  /** How long to wait for the last answers after the schedule ends. */
  private static final Duration DRAIN = Duration.ofSeconds(30);

  private OpenLoop() {}

  /**
   * Runs {@code call} at {@code ratePerSecond} for warm-up then measurement; {@code onInterval} gets
   * each second's histogram of the measurement (for latency over time), may be null.
   */
  public static Summary run(String name, Call call, double ratePerSecond, Duration warmup, Duration measure,
      java.util.function.Consumer<Histogram> onInterval) throws InterruptedException {
    LatencyStats warm = new LatencyStats(name + " warm-up");
    drive(call, ratePerSecond, warmup, warm, null);
    LatencyStats stats = new LatencyStats(name);
    long started = System.nanoTime();
    drive(call, ratePerSecond, measure, stats, onInterval == null ? null : s -> onInterval.accept(stats.interval()));
    return stats.summary((System.nanoTime() - started) / 1e9);
  }

  static void drive(Call call, double ratePerSecond, Duration duration, LatencyStats stats, LongConsumer everySecond)
      throws InterruptedException {
    long intervalNanos = (long) (1e9 / ratePerSecond);
    long total = (long) (duration.toNanos() / (double) intervalNanos);
    long t0 = System.nanoTime();
    AtomicLong outstanding = new AtomicLong();
    CountDownLatch allAnswered = new CountDownLatch(1);
    long nextSecond = t0 + TimeUnit.SECONDS.toNanos(1);
    for (long i = 0; i < total; i++) {
      long intended = t0 + i * intervalNanos;
      long now;
      while ((now = System.nanoTime()) < intended) {
        long wait = intended - now;
        if (wait > 200_000) {
          TimeUnit.NANOSECONDS.sleep(wait - 100_000);
        } else {
          Thread.onSpinWait();
        }
      }
      if (everySecond != null && now >= nextSecond) {
        everySecond.accept(now);
        nextSecond += TimeUnit.SECONDS.toNanos(1);
      }
      outstanding.incrementAndGet();
      call.start(i).whenComplete((ok, failure) -> {
        if (failure == null) {
          stats.success(System.nanoTime() - intended);
        } else {
          stats.error(Outcome.of(failure));
        }
        if (outstanding.decrementAndGet() == 0) {
          allAnswered.countDown();
        }
      });
    }
    if (outstanding.get() > 0) {
      allAnswered.await(DRAIN.toMillis(), TimeUnit.MILLISECONDS);
    }
    if (everySecond != null) {
      everySecond.accept(System.nanoTime());
    }
  }
}
