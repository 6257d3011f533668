package dev.warehouse.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A server that handles one request at a time, 1 ms each, and stalls once for 500 ms. Every request
 * due during the stall waits for it: a caller arriving at a fixed rate sees that. The open loop
 * (latency from the intended start) must report it; a closed loop with one caller only ever has one
 * request in the stall, so its p99 hides it: the coordinated omission the open loop corrects. In
 * stepped time, so the latencies are the schedule's, not the test machine's.
 */
class CoordinatedOmissionTest {

  private final SteppedTicker ticker = new SteppedTicker();

  /** A serial server with one stall at the given request. */
  private Call stallingServer(long stallAt) {
    return ticker.serialServer(n -> Duration.ofMillis(n == stallAt ? 500 : 1));
  }

  @Test
  void openLoop_countsEveryRequestQueuedBehindAStall() throws Exception {
    // 200 requests/s for 3 s; the stall comes after one second.
    Summary open = OpenLoop.run(ticker, "open", stallingServer(200 + 200), 200, Duration.ofSeconds(1),
        Duration.ofSeconds(3), null);
    // 100 requests were due during the 500 ms stall: well over 1 % of 600 waited 250 ms or more.
    assertThat(open.count()).isEqualTo(600);
    assertThat(open.p99()).isGreaterThan(250);
    assertThat(open.max()).isGreaterThan(450);
  }

  @Test
  void closedLoop_hidesTheStall_inItsPercentiles() throws Exception {
    Summary closed = ClosedLoop.run(ticker, "closed", stallingServer(700), 1, Duration.ofMillis(200), Duration.ofSeconds(2));
    assertThat(closed.max()).isGreaterThan(450); // the stall itself is seen once...
    assertThat(closed.p99()).isLessThan(20);     // ...but weighs as one sample in a thousand
  }
}
