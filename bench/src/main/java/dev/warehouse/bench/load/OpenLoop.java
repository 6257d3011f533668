package dev.warehouse.bench.load;

import dev.warehouse.bench.stats.LatencyStats;
import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
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
    return run(Ticker.SYSTEM, name, call, ratePerSecond, warmup, measure, onInterval);
  }

  static Summary run(Ticker ticker, String name, Call call, double ratePerSecond, Duration warmup, Duration measure,
      java.util.function.Consumer<Histogram> onInterval) throws InterruptedException {
    LatencyStats warm = new LatencyStats(name + " warm-up");
    drive(ticker, call, ratePerSecond, warmup, i -> warm, 1, null);
    LatencyStats stats = new LatencyStats(name);
    long started = ticker.nanoTime();
    drive(ticker, call, ratePerSecond, measure, i -> stats, 1,
        onInterval == null ? null : s -> onInterval.accept(stats.interval()));
    return stats.summary((ticker.nanoTime() - started) / 1e9);
  }

  /**
   * Runs the {@code calls} side by side, taking turns in one schedule at {@code ratePerSecond} in all:
   * each round of {@code n} requests has one per call, all with the same key index (the round's), so
   * each call sees the same keys, and a stall of the machine (a GC pause, a busy core) falls on all of
   * them alike instead of on whichever happened to run then. The order within a round is shuffled
   * ({@link #turn}). One summary per call, in order.
   */
  public static List<Summary> interleaved(List<String> names, List<Call> calls, double ratePerSecond, Duration warmup,
      Duration measure) throws InterruptedException {
    return interleaved(names, calls, ratePerSecond, warmup, measure, names.stream().map(name -> LatencyStats.histogram()).toList());
  }

  /**
   * As {@link #interleaved(List, List, double, Duration, Duration)}, and adds each call's measured
   * latencies (µs) to {@code pools}, in order: to take percentiles over several runs together.
   */
  public static List<Summary> interleaved(List<String> names, List<Call> calls, double ratePerSecond, Duration warmup,
      Duration measure, List<Histogram> pools) throws InterruptedException {
    return interleaved(Ticker.SYSTEM, names, calls, ratePerSecond, warmup, measure, pools);
  }

  static List<Summary> interleaved(Ticker ticker, List<String> names, List<Call> calls, double ratePerSecond,
      Duration warmup, Duration measure, List<Histogram> pools) throws InterruptedException {
    int n = calls.size();
    Call turns = i -> calls.get(turn(i, n)).start(i / n);
    LatencyStats warm = new LatencyStats("warm-up");
    drive(ticker, turns, ratePerSecond, warmup, i -> warm, n, null);
    List<LatencyStats> stats = new ArrayList<>();
    names.forEach(name -> stats.add(new LatencyStats(name)));
    long started = ticker.nanoTime();
    drive(ticker, turns, ratePerSecond, measure, i -> stats.get(turn(i, n)), n, null);
    double seconds = (ticker.nanoTime() - started) / 1e9;
    for (int k = 0; k < n; k++) {
      stats.get(k).addTo(pools.get(k));
    }
    return stats.stream().map(s -> s.summary(seconds)).toList();
  }

  private static void drive(Ticker ticker, Call call, double ratePerSecond, Duration duration,
      LongFunction<LatencyStats> statsOf, int turns, LongConsumer everySecond)
      throws InterruptedException {
    long intervalNanos = (long) (1e9 / ratePerSecond);
    // Whole turns only, so that every call gets the same number of requests.
    long total = (long) (duration.toNanos() / (double) intervalNanos) / turns * turns;
    long t0 = ticker.nanoTime();
    // Counts answers still to come of all the requests, not of those sent so far: counted that way it
    // fell to zero whenever the calls caught up between two requests, the drain below ended at once, and
    // the last answers of the run went unrecorded.
    AtomicLong unanswered = new AtomicLong(total);
    CountDownLatch allAnswered = new CountDownLatch(total > 0 ? 1 : 0);
    long nextSecond = t0 + TimeUnit.SECONDS.toNanos(1);
    for (long i = 0; i < total; i++) {
      long intended = t0 + i * intervalNanos;
      long now = ticker.waitUntil(intended);
      if (everySecond != null && now >= nextSecond) {
        everySecond.accept(now);
        nextSecond += TimeUnit.SECONDS.toNanos(1);
      }
      LatencyStats stats = statsOf.apply(i);
      call.start(i).whenComplete((ok, failure) -> {
        if (failure == null) {
          stats.success(ticker.nanoTime() - intended);
        } else {
          stats.error(Outcome.of(failure));
        }
        if (unanswered.decrementAndGet() == 0) {
          allAnswered.countDown();
        }
      });
    }
    ticker.await(allAnswered, DRAIN.toNanos());
    if (everySecond != null) {
      everySecond.accept(ticker.nanoTime());
    }
  }

  /**
   * The call that request {@code i} goes to: round {@code i / n} visits the {@code n} calls in an order
   * of its own, shuffled with a fixed seed, the same whenever it is asked. In a fixed order each call
   * always followed the same neighbour and overlapped with its tail, which moved what a layer seemed to
   * add with its place in the order (docs/performance-log.md).
   */
  static int turn(long i, int n) {
    SplittableRandom random = new SplittableRandom(0x5EEDL ^ (i / n) * 0x9E3779B97F4A7C15L);
    int[] order = new int[n];
    for (int k = 0; k < n; k++) {
      order[k] = k;
    }
    for (int k = n - 1; k > 0; k--) {
      int j = random.nextInt(k + 1);
      int swap = order[k];
      order[k] = order[j];
      order[j] = swap;
    }
    return order[(int) (i % n)];
  }
}
