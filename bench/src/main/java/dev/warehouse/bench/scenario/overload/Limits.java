package dev.warehouse.bench.scenario.overload;

import static dev.warehouse.bench.report.Report.num;

import java.util.List;

/** A limiter's limit over a level (first, lowest, highest and last sample) and the most calls it held at once. */
public record Limits(double first, double min, double max, double last, double maxInflight) {

  static Limits of(List<double[]> samples) {
    if (samples.isEmpty()) {
      return new Limits(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }
    return new Limits(samples.get(0)[0], samples.stream().mapToDouble(s -> s[0]).min().orElse(Double.NaN),
        samples.stream().mapToDouble(s -> s[0]).max().orElse(Double.NaN), samples.get(samples.size() - 1)[0],
        samples.stream().mapToDouble(s -> s[1]).max().orElse(Double.NaN));
  }

  @Override
  public String toString() {
    return num(first) + " → " + num(last) + " (" + num(min) + "–" + num(max) + "), in flight ≤ " + num(maxInflight);
  }
}
