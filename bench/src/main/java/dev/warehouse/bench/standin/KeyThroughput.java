package dev.warehouse.bench.standin;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * DynamoDB's per-partition write limit, for the stand-in: each partition key has a token bucket of
 * {@code unitsPerSecond} write units, holding one second of them, and a write takes its units from every
 * key it writes (a transaction's items two each), all or nothing. Runs on the stand-in's one I/O thread,
 * so it needs no lock. 0 turns it off.
 */
final class KeyThroughput {

  /** DynamoDB's write units a second per partition key. */
  static final double DYNAMODB_WRITE_UNITS = 1000;

  private final double unitsPerSecond;
  private final Map<String, double[]> buckets = new HashMap<>(); // key -> {tokens, last fill in nanos}

  KeyThroughput(double unitsPerSecond) {
    this.unitsPerSecond = unitsPerSecond;
  }

  /**
   * Takes {@code units} from each of {@code keys} (repeats add up); when one is short, takes nothing and
   * answers the keys that were short (empty: taken).
   */
  java.util.Set<String> take(List<String> keys, double units, long nowNanos) {
    if (unitsPerSecond <= 0) {
      return java.util.Set.of();
    }
    Map<String, Double> needed = new HashMap<>();
    keys.forEach(k -> needed.merge(k, units, Double::sum));
    java.util.Set<String> short_ = new java.util.HashSet<>();
    for (Map.Entry<String, Double> need : needed.entrySet()) {
      double[] bucket = filled(need.getKey(), nowNanos);
      // A full bucket lets one request through however large, as a partition never refuses a lone item.
      if (bucket[0] < need.getValue() && bucket[0] < unitsPerSecond) {
        short_.add(need.getKey());
      }
    }
    if (short_.isEmpty()) {
      needed.forEach((key, n) -> buckets.get(key)[0] -= n);
    }
    return short_;
  }

  private double[] filled(String key, long nowNanos) {
    double[] bucket = buckets.computeIfAbsent(key, k -> new double[] {unitsPerSecond, nowNanos});
    bucket[0] = Math.min(unitsPerSecond, bucket[0] + (nowNanos - bucket[1]) / 1e9 * unitsPerSecond);
    bucket[1] = nowNanos;
    return bucket;
  }
}
