package dev.warehouse.bench.load;

import dev.warehouse.bench.stats.LatencyStats;
import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Closed loop: {@code concurrency} callers, each issuing its next request when the previous one
 * answers. Measures the most the system serves; latency here is service time, not what a caller
 * arriving at a fixed rate would see (use {@link OpenLoop} for that). Warm-up calls are not counted.
 */
public final class ClosedLoop {

  private ClosedLoop() {}

  public static Summary run(String name, Call call, int concurrency, Duration warmup, Duration measure)
      throws InterruptedException {
    return run(Ticker.SYSTEM, name, call, concurrency, warmup, measure);
  }

  static Summary run(Ticker ticker, String name, Call call, int concurrency, Duration warmup, Duration measure)
      throws InterruptedException {
    LatencyStats warm = new LatencyStats(name + " warm-up");
    drive(ticker, call, concurrency, warmup, warm);
    LatencyStats stats = new LatencyStats(name);
    long started = ticker.nanoTime();
    drive(ticker, call, concurrency, measure, stats);
    return stats.summary((ticker.nanoTime() - started) / 1e9);
  }

  private static void drive(Ticker ticker, Call call, int concurrency, Duration duration, LatencyStats stats)
      throws InterruptedException {
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicLong sequence = new AtomicLong();
    CountDownLatch done = new CountDownLatch(concurrency);
    for (int c = 0; c < concurrency; c++) {
      next(ticker, call, running, sequence, stats, done);
    }
    ticker.waitUntil(ticker.nanoTime() + duration.toNanos());
    running.set(false);
    ticker.await(done, Long.MAX_VALUE);
  }

  private static void next(Ticker ticker, Call call, AtomicBoolean running, AtomicLong sequence, LatencyStats stats,
      CountDownLatch done) {
    if (!running.get()) {
      done.countDown();
      return;
    }
    long start = ticker.nanoTime();
    call.start(sequence.getAndIncrement()).whenComplete((ok, failure) -> {
      if (failure == null) {
        stats.success(ticker.nanoTime() - start);
      } else {
        stats.error(Outcome.of(failure));
      }
      next(ticker, call, running, sequence, stats, done);
    });
  }
}
