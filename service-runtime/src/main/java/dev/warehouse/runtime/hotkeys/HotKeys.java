package dev.warehouse.runtime.hotkeys;

import dev.warehouse.runtime.log.Events;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hottest partition keys of each access pattern over the last minute: what the service's own
 * DynamoDB requests went to, counted per pattern ("A2", "W3") in a bounded top-k summary.
 *
 * <p><b>How.</b> Each pattern has a ring of {@value #SLOTS} space-saving summaries of
 * {@value #COUNTERS_PER_SLOT} counters, one per {@link #SLOT} of time; a read adds up the slots of the
 * {@link #WINDOW} (the current slot and the five before it: the last 50 to 60 seconds). Memory is
 * bounded by patterns × slots × counters whatever the number of keys; a pattern's request count is
 * exact, a key's count an estimate, over by at most the window's requests / {@value #COUNTERS_PER_SLOT}
 * (and below by as much when the key lost its counter in a slot), so any key with more than that
 * share is found. Reports name the {@value #TOP_K} hottest.
 *
 * <p><b>Cost.</b> {@link #record} runs on the SDK's I/O thread for every request: a clock read, a map
 * lookup and O(log counters) swaps under the pattern's own lock, never held for anything slower.
 *
 * <p><b>Metrics</b> (no key is ever a label): {@code dynamodb_hottest_partition_share{pattern}} (the
 * share of the pattern's requests in the window that went to its hottest key, 0 to 1) and
 * {@code dynamodb_hottest_partition_capacity_units_per_second{pattern}} (the capacity units that key
 * consumed per second over the window, comparable with DynamoDB's per-partition limits), registered
 * when a pattern sees its first request.
 *
 * <p><b>Log.</b> {@link #logHotKeys} (run every {@link #SLOT}) writes one {@code event=hot_key} line
 * for each key whose share of its pattern reaches the configured share, once the pattern had at least
 * {@value #LOG_MIN_REQUESTS} requests in the window; at most once per key per window. Keys are IDs:
 * fine in a log line for operators, never a metric label.
 */
public final class HotKeys {

  /** Keys a report names per pattern, at most. */
  public static final int TOP_K = 20;
  /** Counters per slot: more than {@link #TOP_K}, so the twentieth is still counted well. */
  public static final int COUNTERS_PER_SLOT = 64;
  public static final Duration SLOT = Duration.ofSeconds(10);
  public static final int SLOTS = 6;
  /** The most a report covers: the current slot and the five before it. */
  public static final Duration WINDOW = SLOT.multipliedBy(SLOTS);
  /** Fewer requests in the window than this never make a hot-key log line: one request is all of its pattern. */
  public static final long LOG_MIN_REQUESTS = 100;

  public static final String SHARE_METRIC = "dynamodb.hottest.partition.share";
  public static final String CAPACITY_METRIC = "dynamodb.hottest.partition.capacity.units.per.second";

  private static final Logger log = LoggerFactory.getLogger(HotKeys.class);
  /** Rates are never computed over less than a second, so the first requests after start do not look like a storm. */
  private static final long MIN_RATE_MILLIS = 1000;

  /** A pattern's requests in the window, and its hottest keys. */
  public record PatternReport(String patternId, long requests, double requestsPerSecond, List<KeyReport> keys) {}

  /**
   * One hot key of a pattern.
   *
   * @param requests      estimated requests in the window (see the class comment for the bound)
   * @param share         of the pattern's requests in the window, 0 to 1
   * @param capacityUnits capacity units consumed in the window, since the key took its counter in each slot
   */
  public record KeyReport(String partitionKey, long requests, double requestsPerSecond, double share,
      double capacityUnits, double capacityUnitsPerSecond) {}

  private final Clock clock;
  private final long startMillis;
  private final MeterRegistry meters;
  private final double logShare;
  private final long logMinRequests;
  private final ConcurrentHashMap<String, SlidingTopK> patterns = new ConcurrentHashMap<>();
  /** "pattern key" of each key logged within the last window, and when. Guarded by itself. */
  private final Map<String, Long> logged = new HashMap<>();

  /**
   * @param logShare the share of its pattern at which a key is logged ({@code HOT_KEY_LOG_SHARE}), above 0, at most 1
   */
  public HotKeys(Clock clock, MeterRegistry meters, double logShare) {
    this(clock, meters, logShare, LOG_MIN_REQUESTS);
  }

  HotKeys(Clock clock, MeterRegistry meters, double logShare, long logMinRequests) {
    if (!(logShare > 0 && logShare <= 1)) {
      throw new IllegalArgumentException("logShare must be above 0 and at most 1, got " + logShare);
    }
    this.clock = clock;
    this.startMillis = clock.millis();
    this.meters = meters;
    this.logShare = logShare;
    this.logMinRequests = logMinRequests;
  }

  /** Counts one request of {@code patternId} to {@code partitionKey}, which consumed {@code capacityUnits}. */
  public void record(String patternId, String partitionKey, double capacityUnits) {
    SlidingTopK sketch = patterns.get(patternId);
    if (sketch == null) {
      sketch = newPattern(patternId);
    }
    sketch.add(slot(clock.millis()), partitionKey, capacityUnits);
  }

  private SlidingTopK newPattern(String patternId) {
    SlidingTopK created = new SlidingTopK(SLOTS, COUNTERS_PER_SLOT);
    SlidingTopK existing = patterns.putIfAbsent(patternId, created);
    if (existing != null) {
      return existing;
    }
    Gauge.builder(SHARE_METRIC, this, hotKeys -> hotKeys.hottestShare(patternId))
        .description("share of the access pattern's DynamoDB requests in the last minute that went to its hottest partition key")
        .tags("pattern", patternId)
        .strongReference(true)
        .register(meters);
    Gauge.builder(CAPACITY_METRIC, this, hotKeys -> hotKeys.hottestCapacityPerSecond(patternId))
        .description("capacity units per second the access pattern's hottest partition key consumed over the last minute")
        .tags("pattern", patternId)
        .strongReference(true)
        .register(meters);
    return created;
  }

  /**
   * The hottest keys of every pattern that had requests in the window (or of {@code patternId} only),
   * by pattern id, each with at most {@code limit} keys, hottest first.
   */
  public List<PatternReport> report(Optional<String> patternId, int limit) {
    long now = clock.millis();
    double seconds = coveredMillis(now) / 1000.0;
    List<PatternReport> reports = new ArrayList<>();
    new TreeMap<>(patterns).forEach((pattern, sketch) -> {
      if (patternId.isPresent() && !patternId.get().equals(pattern)) {
        return;
      }
      SlidingTopK.Snapshot snapshot = sketch.snapshot(slot(now));
      if (snapshot.total() == 0) {
        return;
      }
      List<KeyReport> keys = snapshot.keys().stream().limit(Math.min(limit, TOP_K))
          .map(k -> new KeyReport(k.key(), k.count(), k.count() / seconds, (double) k.count() / snapshot.total(),
              k.capacityUnits(), k.capacityUnits() / seconds))
          .toList();
      reports.add(new PatternReport(pattern, snapshot.total(), snapshot.total() / seconds, keys));
    });
    return reports;
  }

  /** How long the counts of a report made now cover: the window, or less in a process's first minute. */
  public Duration window() {
    return Duration.ofMillis(coveredMillis(clock.millis()));
  }

  /** The share of {@code patternId}'s requests in the window that went to its hottest key; 0 without requests. */
  double hottestShare(String patternId) {
    SlidingTopK.Snapshot snapshot = snapshot(patternId);
    SlidingTopK.KeyCount hottest = snapshot.hottest();
    return hottest == null ? 0 : Math.min(1.0, (double) hottest.count() / snapshot.total());
  }

  /** The capacity units per second {@code patternId}'s hottest key consumed over the window. */
  double hottestCapacityPerSecond(String patternId) {
    SlidingTopK.KeyCount hottest = snapshot(patternId).hottest();
    return hottest == null ? 0 : hottest.capacityUnits() * 1000.0 / coveredMillis(clock.millis());
  }

  private SlidingTopK.Snapshot snapshot(String patternId) {
    SlidingTopK sketch = patterns.get(patternId);
    return sketch == null ? SlidingTopK.Snapshot.EMPTY : sketch.snapshot(slot(clock.millis()));
  }

  /**
   * Logs each key whose share of its pattern's requests in the window reaches the configured share, at
   * most once per key per window, and only for patterns with at least the minimum of requests. Called
   * every {@link #SLOT}, off the request path.
   */
  public void logHotKeys() {
    long now = clock.millis();
    double seconds = coveredMillis(now) / 1000.0;
    synchronized (logged) {
      logged.values().removeIf(at -> now - at >= WINDOW.toMillis());
      new TreeMap<>(patterns).forEach((pattern, sketch) -> {
        SlidingTopK.Snapshot snapshot = sketch.snapshot(slot(now));
        if (snapshot.total() < logMinRequests) {
          return;
        }
        for (SlidingTopK.KeyCount key : snapshot.keys()) {
          double share = (double) key.count() / snapshot.total();
          if (share < logShare) {
            return; // hottest first: no later key reaches it either
          }
          if (logged.putIfAbsent(pattern + " " + key.key(), now) == null) {
            // Rounded as they were when the line was text: two places for shares, one for rates.
            Events.warn(log, "hot_key").addKeyValue("pattern", pattern)
                .addKeyValue("share", round(Math.min(1.0, share), 100)).addKeyValue("key", key.key())
                .addKeyValue("requests", key.count()).addKeyValue("pattern_requests", snapshot.total())
                .addKeyValue("requests_per_second", round(key.count() / seconds, 10))
                .addKeyValue("capacity_units_per_second", round(key.capacityUnits() / seconds, 10))
                .addKeyValue("window_s", Math.round(seconds)).addKeyValue("threshold", round(logShare, 100)).log();
          }
        }
      });
    }
  }

  private static double round(double value, int per) {
    return Math.round(value * per) / (double) per;
  }

  /** Keys holding a counter, over every pattern and slot: bounded, whatever the number of keys seen. */
  int trackedKeys() {
    return patterns.values().stream().mapToInt(SlidingTopK::trackedKeys).sum();
  }

  private static long slot(long millis) {
    return Math.floorDiv(millis, SLOT.toMillis());
  }

  /** From the start of the window's oldest slot (or the process's start, when later) to now; at least a second. */
  private long coveredMillis(long now) {
    long oldestSlotStart = (slot(now) - SLOTS + 1) * SLOT.toMillis();
    return Math.max(MIN_RATE_MILLIS, now - Math.max(oldestSlotStart, startMillis));
  }
}
