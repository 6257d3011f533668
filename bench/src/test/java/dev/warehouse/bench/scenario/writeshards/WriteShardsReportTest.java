package dev.warehouse.bench.scenario.writeshards;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.scenario.Settings;
import dev.warehouse.bench.stats.Summary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scenario 6's section rendered from fixed results: each part's table, what they show, and the JSON. */
class WriteShardsReportTest {

  @Test
  void write_judgesTheSpreadAndTheDetector_andTabulatesA7sCost() {
    Report report = new Report();
    WriteShardsReport.write(report, runs(), costs(), Settings.quick());

    assertThat(report.markdown())
        .contains("## 6. Write shards and hot keys")
        .contains("| 1 | 1000 | 33.33 | 0 | 1200 | 1 | 17.0 % | 100.0 % | 100 % on one key (no sharding) | yes |")
        .contains("| 16 | 1400 | 46.67 | 2 {ABORTED=2} | 1200 | 16 | 1.7 % | 8.3 % | ≤ 12.5 % | yes |")
        .contains("| 1 | `LOW_STOCK#00` 20.0 % | `LOW_STOCK#00` 21.0 % | not the hottest (`LOW_STOCK#00` is hotter) "
            + "| 1 of 1 | 1.00 pp | every poll right, ±5 pp | yes |")
        // The first poll named another key: the celebrity was named in time, but not every poll was right.
        .contains("| 16 | `PRODUCT#C000` 14.0 % | `PRODUCT#C000` 15.0 % | 0.75 s | 1 of 2 | 1.00 pp "
            + "| named ≤ 10 s; every poll right, ±5 pp | no |")
        .contains("| 1 | 66 | 24.86 | 1.00 | 1.04 | 1.00 | 48.64 | 439.81 | yes |")
        .contains("| 4 | 66 | 24.86 | 4.00 | 3.85 | 3.70 | 117.95 | 255.36 | no |")
        .contains("a page costs 1.00 Query at N = 1 and 4.00 at N = 4, and examines 3.85 items per item returned");
  }

  @Test
  void write_putsBothPartsIntoTheJson(@TempDir Path dir) throws IOException {
    Report report = new Report();
    WriteShardsReport.write(report, runs(), costs(), Settings.quick());
    report.write(dir.resolve("benchmarks.md"), dir.resolve("benchmarks.json"), "");

    assertThat(Files.readString(dir.resolve("benchmarks.json")))
        .contains("\"write_shards\": {")
        .contains("\"largest_shard_share\": 1.0")
        .contains("\"celebrity_named_after_seconds\": -1.0")
        .contains("\"celebrity_named_after_seconds\": 0.75")
        .contains("\"queries_per_page\": 4.0");
  }

  private static List<CelebrityRun> runs() {
    Map<String, Long> sixteen = new TreeMap<>();
    for (int s = 0; s < 16; s++) {
      sixteen.put(String.format("LOW_STOCK#%02d", s), s < 8 ? 100L : 50L);
    }
    return List.of(
        new CelebrityRun(1, summary("AdjustStock N=1", 1000, 33.33, 300, 900, Map.of()), Map.of("LOW_STOCK#00", 1200L),
            "PRODUCT#C000", 0.21, 0.17, List.of(new Observation(0.25, "LOW_STOCK#00", 0.21, 0.2, "LOW_STOCK#00", 0.2))),
        new CelebrityRun(16, summary("AdjustStock N=16", 1400, 46.67, 250, 800, Map.of("ABORTED", 2L)), sixteen,
            "PRODUCT#C000", 0.14, 0.017, List.of(
                new Observation(0.25, "PRODUCT#C001", 0.05, 0.04, "PRODUCT#C000", 0.12),
                new Observation(0.75, "PRODUCT#C000", 0.15, 0.14, "PRODUCT#C000", 0.14))));
  }

  private static List<FanOutCost> costs() {
    return List.of(
        new FanOutCost(1, 66, 1.0, 1.04, 1.0, 24.86, summary("A7 N=1", 66, 10, 48.64, 439.81, Map.of()), true),
        new FanOutCost(4, 66, 4.0, 3.85, 3.7, 24.86, summary("A7 N=4", 66, 10, 117.95, 255.36, Map.of()), false));
  }

  private static Summary summary(String name, long count, double perSecond, double p50, double p99,
      Map<String, Long> errors) {
    return new Summary(name, count, perSecond, p50, p50, p99, p99, p99, errors);
  }
}
