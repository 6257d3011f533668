package dev.warehouse.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A server that handles one request at a time, 1 ms each, and stalls once for 500 ms. Every request
 * due during the stall waits for it: a caller arriving at a fixed rate sees that. The open loop
 * (latency from the intended start) must report it; a closed loop with one caller only ever has one
 * request in the stall, so its p99 hides it: the coordinated omission the open loop corrects.
 */
class CoordinatedOmissionTest {

  /** A serial server with one stall at the given request. */
  private static Call stallingServer(ExecutorService server, long stallAt) {
    AtomicLong handled = new AtomicLong();
    return i -> CompletableFuture.runAsync(() -> sleep(handled.getAndIncrement() == stallAt ? 500 : 1), server);
  }

  @Test
  void openLoop_countsEveryRequestQueuedBehindAStall() throws Exception {
    ExecutorService server = Executors.newSingleThreadExecutor();
    // 200 requests/s for 3 s; the stall comes after about one second.
    Summary open = OpenLoop.run("open", stallingServer(server, 200 + 200), 200, Duration.ofSeconds(1), Duration.ofSeconds(3), null);
    server.shutdownNow();
    // About 100 requests were due during the 500 ms stall: well over 1 % of 600 waited 250 ms or more.
    assertThat(open.count()).isBetween(550L, 650L);
    assertThat(open.p99()).isGreaterThan(250);
    assertThat(open.max()).isGreaterThan(450);
  }

  @Test
  void closedLoop_hidesTheStall_inItsPercentiles() throws Exception {
    ExecutorService server = Executors.newSingleThreadExecutor();
    Summary closed = ClosedLoop.run("closed", stallingServer(server, 700), 1, Duration.ofMillis(200), Duration.ofSeconds(2));
    server.shutdownNow();
    assertThat(closed.max()).isGreaterThan(450); // the stall itself is seen once...
    assertThat(closed.p99()).isLessThan(20);     // ...but weighs as one sample in a thousand
  }

  /**
   * The serial server's service time, which the requests behind it queue for: a modelled latency, not a wait.
   * It must hold the server's one thread, so a scheduled completion would not do.
   */
  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
