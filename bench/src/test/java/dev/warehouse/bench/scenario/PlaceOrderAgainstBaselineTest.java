package dev.warehouse.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.stats.LatencyStats;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class PlaceOrderAgainstBaselineTest {

  @Test
  void withinTenPercent_isAtMostTenPercentSlower_fasterCounting() {
    assertThat(PlaceOrderAgainstBaseline.verdict(1.10)).isEqualTo("met");
    assertThat(PlaceOrderAgainstBaseline.verdict(0.70)).isEqualTo("met");
    assertThat(PlaceOrderAgainstBaseline.verdict(1.11)).isEqualTo("not met");
  }

  @Test
  void nothingMeasured_isNotMet() {
    assertThat(PlaceOrderAgainstBaseline.verdict(Double.NaN)).isEqualTo("not met");
    assertThat(PlaceOrderAgainstBaseline.verdict(Double.POSITIVE_INFINITY)).isEqualTo("not met");
  }

  @Test
  void aBuildThatAnsweredNothing_hasNoRatio() {
    Histogram answered = LatencyStats.histogram();
    answered.recordValue(10_000);

    assertThat(PlaceOrderAgainstBaseline.newOverOld(LatencyStats.histogram(), answered, 50)).isNaN();
    assertThat(PlaceOrderAgainstBaseline.newOverOld(answered, LatencyStats.histogram(), 50)).isNaN();
    assertThat(PlaceOrderAgainstBaseline.newOverOld(answered, answered, 99)).isEqualTo(1.0);
  }

  @Test
  void callsAreOldThenNew_eachViaGatewayThenStraight() {
    assertThat(PlaceOrderAgainstBaseline.labels()).containsExactly(
        "PlaceOrder via gateway, old", "PlaceOrder straight, old", "PlaceOrder via gateway, new", "PlaceOrder straight, new");
  }
}
