package dev.warehouse.bench.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ScrapeTest {

  private static final String BEFORE = """
      t_seconds_bucket{method="GetOrder",statusCode="RESOURCE_EXHAUSTED",le="0.001"} 10
      t_seconds_bucket{method="GetOrder",statusCode="RESOURCE_EXHAUSTED",le="0.002"} 10
      t_seconds_bucket{method="GetOrder",statusCode="RESOURCE_EXHAUSTED",le="0.004"} 10
      t_seconds_bucket{method="GetOrder",statusCode="RESOURCE_EXHAUSTED",le="+Inf"} 10
      t_seconds_bucket{method="GetOrder",statusCode="OK",le="0.001"} 5
      t_seconds_bucket{method="GetOrder",statusCode="OK",le="+Inf"} 5
      """;
  private static final String AFTER = """
      t_seconds_bucket{method="GetOrder",statusCode="RESOURCE_EXHAUSTED",le="0.001"} 60
      t_seconds_bucket{method="GetOrder",statusCode="RESOURCE_EXHAUSTED",le="0.002"} 100
      t_seconds_bucket{method="GetOrder",statusCode="RESOURCE_EXHAUSTED",le="0.004"} 109
      t_seconds_bucket{method="GetOrder",statusCode="RESOURCE_EXHAUSTED",le="+Inf"} 110
      t_seconds_bucket{method="GetOrder",statusCode="OK",le="0.001"} 500
      t_seconds_bucket{method="GetOrder",statusCode="OK",le="+Inf"} 505
      """;

  @Test
  void buckets_sumTheMatchingSeriesByBound() {
    TreeMap<Double, Double> all = Scrape.buckets(AFTER, "t_seconds", "GetOrder");

    assertThat(all).containsEntry(0.001, 560.0).containsEntry(Double.POSITIVE_INFINITY, 615.0);
    assertThat(Scrape.buckets(AFTER, "t_seconds", "RESOURCE_EXHAUSTED")).hasSize(4).containsEntry(0.002, 100.0);
  }

  @Test
  void quantile_ofWhatWasCountedBetweenTwoScrapes_interpolatesInItsBucket() {
    TreeMap<Double, Double> before = Scrape.buckets(BEFORE, "t_seconds", "RESOURCE_EXHAUSTED");
    TreeMap<Double, Double> after = Scrape.buckets(AFTER, "t_seconds", "RESOURCE_EXHAUSTED");

    // 100 counted: 50 up to 1 ms, 40 in (1, 2], 9 in (2, 4], 1 above.
    assertThat(Scrape.quantile(before, after, 0.5)).isCloseTo(0.001, within(1e-12));
    assertThat(Scrape.quantile(before, after, 0.7)).isCloseTo(0.0015, within(1e-12));
    assertThat(Scrape.quantile(before, after, 0.99)).isCloseTo(0.004, within(1e-12));
    assertThat(Scrape.quantile(before, after, 1.0)).as("in +Inf: the highest finite bound").isEqualTo(0.004);
  }

  @Test
  void quantile_ofNothingCounted_isNaN() {
    TreeMap<Double, Double> same = Scrape.buckets(BEFORE, "t_seconds", "RESOURCE_EXHAUSTED");
    assertThat(Scrape.quantile(same, same, 0.5)).isNaN();
    assertThat(Scrape.quantile(new TreeMap<>(), new TreeMap<>(), 0.5)).isNaN();
  }
}
