package dev.warehouse.bench.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SummaryTest {

  @Test
  void percentiles_ofAKnownDistribution() {
    LatencyStats stats = new LatencyStats("op");
    for (int ms = 1; ms <= 1000; ms++) {
      stats.success(TimeUnit.MILLISECONDS.toNanos(ms));
    }
    stats.error("UNAVAILABLE");
    stats.error("UNAVAILABLE");
    Summary s = stats.summary(10);
    assertThat(s.count()).isEqualTo(1000);
    assertThat(s.throughput()).isEqualTo(100.0);
    assertThat(s.p50()).isCloseTo(500, within(1.0));
    assertThat(s.p90()).isCloseTo(900, within(1.0));
    assertThat(s.p99()).isCloseTo(990, within(1.0));
    assertThat(s.p999()).isCloseTo(999, within(1.0));
    assertThat(s.max()).isCloseTo(1000, within(1.0));
    assertThat(s.errors()).containsEntry("UNAVAILABLE", 2L);
    assertThat(s.errorCount()).isEqualTo(2);
  }

  @Test
  void intervals_addUpToTheTotal() {
    LatencyStats stats = new LatencyStats("op");
    stats.success(1_000_000);
    assertThat(stats.interval().getTotalCount()).isEqualTo(1);
    stats.success(2_000_000);
    stats.success(3_000_000);
    assertThat(stats.interval().getTotalCount()).isEqualTo(2);
    assertThat(stats.summary(1).count()).isEqualTo(3);
  }
}
