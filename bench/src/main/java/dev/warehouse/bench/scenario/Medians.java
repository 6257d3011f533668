package dev.warehouse.bench.scenario;

import dev.warehouse.bench.stats.Summary;
import java.util.List;
import java.util.function.ToDoubleFunction;

/** Medians over repeated runs: the machines are small and noisy, one run proves little. */
final class Medians {

  private Medians() {}

  static double of(List<Summary> runs, ToDoubleFunction<Summary> metric) {
    double[] values = runs.stream().mapToDouble(metric).sorted().toArray();
    int n = values.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }
}
