package dev.warehouse.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The generator sends each request when it is due. Latency counts from the intended start
 * (coordinated-omission correction), so a request the generator sends late carries its lateness
 * into the system's latency.
 */
@Tag("integration")
class OpenLoopPacingTest {

  @Test
  void requestsGoOutEvenlySpaced_whenTheIntervalIsNotWholeMilliseconds() throws Exception {
    List<Long> sent = new ArrayList<>();
    Call answeredAtOnce = i -> {
      sent.add(System.nanoTime());
      return CompletableFuture.completedFuture(null);
    };

    // 800 requests/s: one every 1.25 ms.
    Summary summary = OpenLoop.run("paced", answeredAtOnce, 800, Duration.ZERO, Duration.ofSeconds(1), null);

    List<Long> gapsMicros = new ArrayList<>();
    for (int i = 1; i < sent.size(); i++) {
      gapsMicros.add((sent.get(i) - sent.get(i - 1)) / 1_000);
    }
    gapsMicros.sort(null);
    // Sleeping in whole milliseconds, the generator sent at a median gap of 1.12 ms, with longer sleeps between.
    assertThat(gapsMicros.get(gapsMicros.size() / 2)).isBetween(1_200L, 1_300L);
    // Answered at once, a request's latency is how late it went out: 0.02 ms at the median here,
    // against 0.53-0.56 ms while the generator slept in whole milliseconds.
    assertThat(summary.p50()).isLessThan(0.25);
  }
}
