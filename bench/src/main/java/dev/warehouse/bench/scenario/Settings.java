package dev.warehouse.bench.scenario;

import java.time.Duration;
import java.util.List;

/** How long and how hard each scenario runs; {@link #quick()} is a smoke run of the whole tool. */
public record Settings(
    int rounds,
    Duration warmup,
    Duration measure,
    double layerRate,
    double standInRate,
    int standInRounds,
    Duration standInMeasure,
    double proxyRate,
    int proxyConcurrency,
    List<Integer> tableSizes,
    Duration sustained,
    int dataItems) {

  public static Settings full() {
    return new Settings(3, Duration.ofSeconds(1), Duration.ofSeconds(2), 30, 1000, 6, Duration.ofSeconds(1), 1000, 32,
        List.of(1_000, 10_000, 100_000), Duration.ofMinutes(5), 400);
  }

  public static Settings quick() {
    return new Settings(1, Duration.ofMillis(300), Duration.ofSeconds(1), 10, 200, 2, Duration.ofMillis(300), 200, 8,
        List.of(200, 2_000), Duration.ofSeconds(10), 400);
  }
}
