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
    LatencyStats warm = new LatencyStats(name + " warm-up");
    drive(call, concurrency, warmup, warm);
    LatencyStats stats = new LatencyStats(name);
    long started = System.nanoTime();
    drive(call, concurrency, measure, stats);
    return stats.summary((System.nanoTime() - started) / 1e9);
  }

  private static void drive(Call call, int concurrency, Duration duration, LatencyStats stats) throws InterruptedException {
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicLong sequence = new AtomicLong();
    CountDownLatch done = new CountDownLatch(concurrency);
    for (int c = 0; c < concurrency; c++) {
      next(call, running, sequence, stats, done);
    }
    Thread.sleep(duration.toMillis());
    running.set(false);
    done.await();
  }

  private static void next(Call call, AtomicBoolean running, AtomicLong sequence, LatencyStats stats, CountDownLatch done) {
    if (!running.get()) {
      done.countDown();
      return;
    }
    long start = System.nanoTime();
    call.start(sequence.getAndIncrement()).whenComplete((ok, failure) -> {
      if (failure == null) {
        stats.success(System.nanoTime() - start);
      } else {
        stats.error(Outcome.of(failure));
      }
      next(call, running, sequence, stats, done);
    });
  }
}
