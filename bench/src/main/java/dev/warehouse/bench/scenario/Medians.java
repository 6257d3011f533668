package dev.warehouse.bench.scenario;

import dev.warehouse.bench.stats.Summary;
import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.stream.DoubleStream;

/** Medians over repeated runs: the machines are small and noisy, one run proves little. */
final class Medians {

  private Medians() {}

  static double of(List<Summary> runs, ToDoubleFunction<Summary> metric) {
    return of(runs.stream().mapToDouble(metric));
  }

  /** The median of the values that are numbers; NaN when there are none. */
  static double of(DoubleStream values) {
    double[] sorted = values.filter(v -> !Double.isNaN(v)).sorted().toArray();
    int n = sorted.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
