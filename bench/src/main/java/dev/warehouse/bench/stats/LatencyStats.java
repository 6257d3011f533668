package dev.warehouse.bench.stats;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Latencies and outcomes of one operation under load: an HdrHistogram (microsecond resolution, 3
 * significant digits, up to one minute) fed lock-free from many threads, and error counts by status.
 */
public final class LatencyStats {

  private static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(1);

  private final String name;
  private final Recorder recorder = new Recorder(HIGHEST_MICROS, 3);
  private final Histogram total = histogram();
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();

  public LatencyStats(String name) {
    this.name = name;
  }

  /** An empty histogram of the same range and precision, to pool several measurements in. */
  public static Histogram histogram() {
    return new Histogram(HIGHEST_MICROS, 3);
  }

  public String name() {
    return name;
  }

  /** Records one successful call that took {@code nanos}. */
  public void success(long nanos) {
    recorder.recordValue(Math.min(HIGHEST_MICROS, Math.max(1, TimeUnit.NANOSECONDS.toMicros(nanos))));
  }

  /** Records one failed call, by its status (e.g. "UNAVAILABLE"); its latency is not counted. */
  public void error(String code) {
    errors.computeIfAbsent(code, c -> new LongAdder()).increment();
  }

  /** The calls recorded since the last interval, also added to the running total. */
  public synchronized Histogram interval() {
    Histogram interval = recorder.getIntervalHistogram();
    total.add(interval);
    return interval;
  }

  /** Adds every call recorded so far to {@code pool}. */
  public synchronized void addTo(Histogram pool) {
    interval();
    pool.add(total);
  }

  /** Everything recorded so far, over {@code seconds} of measurement. */
  public synchronized Summary summary(double seconds) {
    interval();
    Map<String, Long> byCode = new TreeMap<>();
    errors.forEach((code, n) -> byCode.put(code, n.sum()));
    return Summary.of(name, total, seconds, byCode);
  }
}
