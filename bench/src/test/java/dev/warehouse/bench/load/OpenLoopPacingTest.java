package dev.warehouse.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The generator sends each request when it is due, on a schedule of fractional milliseconds, and counts latency
 * from the intended start (coordinated-omission correction). In stepped time, so the schedule is checked exactly
 * and no busy machine moves it; how closely the machine's clock keeps that schedule is the benchmark's to measure.
 */
class OpenLoopPacingTest {

  private final SteppedTicker ticker = new SteppedTicker();

  @Test
  void requestsGoOutEvenlySpaced_whenTheIntervalIsNotWholeMilliseconds() throws Exception {
    List<Long> sent = new ArrayList<>();
    Call answeredAtOnce = i -> {
      sent.add(ticker.nanoTime());
      return CompletableFuture.completedFuture(null);
    };

    // 800 requests/s: one every 1.25 ms. Sleeping in whole milliseconds would make gaps of 1 and 2 ms.
    Summary summary = OpenLoop.run(ticker, "paced", answeredAtOnce, 800, Duration.ZERO, Duration.ofSeconds(1), null);

    assertThat(sent).hasSize(800);
    for (int i = 1; i < sent.size(); i++) {
      assertThat(sent.get(i) - sent.get(i - 1)).as("gap before request " + i).isEqualTo(1_250_000L);
    }
    // Answered at once and sent on time, no request carries lateness into its latency (beyond the histogram's
    // resolution, a microsecond).
    assertThat(summary.p50()).isLessThanOrEqualTo(0.001);
    assertThat(summary.p99()).isLessThanOrEqualTo(0.001);
  }
}
