package dev.warehouse.bench.scenario.overload;

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

/** Scenario 10's section rendered from fixed results: each level judged against its targets, and the JSON. */
class OverloadReportTest {

  @Test
  void write_judgesEachLevelAgainstItsTargets() {
    Report report = new Report();
    OverloadReport.write(report, Settings.quick(), Map.of("moto", moto()));

    assertThat(report.markdown())
        .contains("| Target (moto) | 1× (300/s) | 2× (600/s) |")
        .contains("| goodput ≥ 90 % of 300/s | 285/s, 95 % (met) | 150/s, 50 % (**not met**) |")
        .contains("| admitted p99 ≤ 3.00× unloaded (30.00 ms) | 12.00 ms, 1.20× (met) | 40.00 ms, 4.00× (**not met**) |")
        .contains("| refusals p50 / p99 ≤ 5.00 ms | none refused | 0.80 / 4.00 ms (met) |")
        .contains("| polite A5 success ≥ 99 % | 75 of 75 (met) | 74 of 75 (**not met**) |")
        .contains("| peak RSS < 400 MB (gateway, order-service) | 150, 210 MB (met) "
            + "| 151, 120 MB, [order-service] out of heap (**not met**) |")
        .contains("| A6 normal again ≤ 2.00 s after the flood | 0.50 s (met) | not within 30 s (**not met**) |")
        .contains("After 2×: [order-service out of heap (OutOfMemoryError in its log)]; the levels above it were not run")
        .contains("| 2× | 9000 (late p99 1.50 ms) | OK 3000, RESOURCE_EXHAUSTED (gateway) 900 |")
        // The queue the limits let in at the top level, at moto's time per call: 20 × 1000/300 ms.
        .contains("up to 20.00 calls in flight, and 20.00 × 3.33 ms = 66.67 ms, against an admitted p99 of 40.00 ms");
  }

  @Test
  void write_putsEachStoresRecordsIntoTheJson(@TempDir Path dir) throws IOException {
    Report report = new Report();
    OverloadReport.write(report, Settings.quick(), Map.of("moto", moto()));
    report.write(dir.resolve("benchmarks.md"), dir.resolve("benchmarks.json"), "");

    assertThat(Files.readString(dir.resolve("benchmarks.json")))
        .contains("\"overload\": {\n    \"moto\": {\n      \"store\": \"moto\"")
        .contains("\"goodputShare\": 0.95")
        .contains("\"recoverySeconds\": null")
        .contains("\"troubles\": {\n            \"order-service\": \"out of heap (OutOfMemoryError in its log)\"");
  }

  private static Store moto() {
    Summary capacity = new Summary("A6 capacity", 3000, 300, 20, 30, 40, 50, 60, Map.of());
    Summary unloaded = new Summary("A6 unloaded", 1800, 90, 4, 6, 10, 12, 15, Map.of());
    return new Store("moto", "cores split", List.of(280.0, 300.0, 295.0), 300, capacity, cpu(), 90, unloaded,
        List.of(level(1, 300, 285, 0.95, 12, 0, Map.of("OK", 4275L), 75, Map.of("gateway", 150L, "order-service", 210L),
                0.5, Map.of()),
            level(2, 600, 150, 0.5, 40, 900, Map.of("OK", 3000L, Overload.REFUSED_BY_GATEWAY, 900L), 74,
                Map.of("gateway", 151L, "order-service", 120L), null,
                Map.of("order-service", OverloadSampler.OUT_OF_HEAP))));
  }

  private static Level level(int multiple, double asked, double goodput, double share, double admittedP99,
      long refused, Map<String, Long> statuses, long politeOk, Map<String, Long> rss, Double recovery,
      Map<String, String> troubles) {
    return new Level(multiple, asked, asked, (long) (asked * 15), 0.1, 1.5, 3, goodput, share, 4, admittedP99,
        admittedP99 / 10, refused, 0.8, 4.0, 0.7, 3.5, new TreeMap<>(statuses), 0, 75, politeOk,
        Map.of("OK", politeOk), 20, new TreeMap<>(rss), recovery, new Limits(20, 12, 20, 14, 20),
        new Limits(16, 10, 16, 11, 12), refused, 0, 0.5, 1.0, 0.4, 0.9, List.of(), cpu(), troubles);
  }

  private static Usage.Measured cpu() {
    return new Usage.Measured(15, new TreeMap<>(Map.of("gateway", 0.3, "moto", 0.8, "bench", 0.2)), 0.9, 0);
  }
}
