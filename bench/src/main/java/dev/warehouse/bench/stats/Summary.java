package dev.warehouse.bench.stats;

import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * Throughput, latency percentiles (milliseconds) and errors of one operation over one measurement.
 */
public record Summary(
    String name,
    long count,
    double throughput,
    double p50,
    double p90,
    double p99,
    double p999,
    double max,
    Map<String, Long> errors) {

  public static Summary of(String name, Histogram micros, double seconds, Map<String, Long> errors) {
    return new Summary(name, micros.getTotalCount(), seconds <= 0 ? 0 : micros.getTotalCount() / seconds,
        percentile(micros, 50), percentile(micros, 90), percentile(micros, 99), percentile(micros, 99.9),
        micros.getTotalCount() == 0 ? 0 : micros.getMaxValue() / 1000.0, Map.copyOf(errors));
  }

  /** The {@code percentile} of a histogram of microseconds, in ms; 0 when it is empty. */
  public static double percentile(Histogram micros, double percentile) {
    return micros.getTotalCount() == 0 ? 0 : micros.getValueAtPercentile(percentile) / 1000.0;
  }

  public long errorCount() {
    return errors.values().stream().mapToLong(Long::longValue).sum();
  }
}
