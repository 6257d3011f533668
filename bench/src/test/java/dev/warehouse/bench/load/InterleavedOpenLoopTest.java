package dev.warehouse.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.stats.LatencyStats;
import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * Layers measured side by side take turns in one schedule: each gets the same number of requests
 * and the same keys, and a stall of the machine lands on all of them, so that it cancels out of the
 * difference between them instead of showing as one layer's cost. In stepped time, so the latencies
 * are the schedule's, not the test machine's.
 */
class InterleavedOpenLoopTest {

  private final SteppedTicker ticker = new SteppedTicker();

  /** {@link OpenLoop#interleaved} in stepped time, each call's latencies in a pool of its own. */
  private List<Summary> interleaved(List<String> names, List<Call> calls, double ratePerSecond, Duration warmup,
      Duration measure) throws InterruptedException {
    return OpenLoop.interleaved(ticker, names, calls, ratePerSecond, warmup, measure,
        names.stream().map(name -> LatencyStats.histogram()).toList());
  }

  @Test
  void eachCallGetsItsTurns_withTheSameKeys_andItsOwnLatencies() throws Exception {
    ConcurrentLinkedQueue<Long> fastKeys = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Long> slowKeys = new ConcurrentLinkedQueue<>();
    Call fiveMs = ticker.answeredAfter(Duration.ofMillis(5));
    Call fast = i -> {
      fastKeys.add(i);
      return CompletableFuture.completedFuture(null);
    };
    Call slow = i -> {
      slowKeys.add(i);
      return fiveMs.start(i);
    };
    List<Summary> both = interleaved(List.of("fast", "slow"), List.of(fast, slow), 400, Duration.ofMillis(200),
        Duration.ofSeconds(1));

    assertThat(both).extracting(Summary::name).containsExactly("fast", "slow");
    assertThat(both.get(0).count()).isEqualTo(both.get(1).count()).isEqualTo(200);
    assertThat(List.copyOf(fastKeys)).isEqualTo(List.copyOf(slowKeys));
    assertThat(both.get(0).p50()).isLessThan(2);
    assertThat(both.get(1).p50()).isGreaterThanOrEqualTo(5);
  }

  @Test
  void countedCalls_countEveryRequestTheyStart_warmUpIncluded() throws Exception {
    LongAdder first = new LongAdder();
    LongAdder second = new LongAdder();
    Call answered = i -> CompletableFuture.completedFuture(null);
    List<Summary> both = interleaved(List.of("first", "second"),
        List.of(answered.countedBy(first), answered.countedBy(second)), 400, Duration.ofMillis(250), Duration.ofMillis(500));

    // 400 requests/s taking turns between two calls: 50 each in the 250 ms of warm-up, 100 each measured.
    assertThat(both).extracting(Summary::count).containsExactly(100L, 100L);
    assertThat(first.sum()).isEqualTo(150);
    assertThat(second.sum()).isEqualTo(150);
  }

  @Test
  void eachCallsMeasuredLatencies_gatherInItsPool_overSeveralRuns() throws Exception {
    Call fast = i -> CompletableFuture.completedFuture(null);
    Call slow = ticker.answeredAfter(Duration.ofMillis(5));
    List<Histogram> pools = List.of(LatencyStats.histogram(), LatencyStats.histogram());
    List<Summary> first = OpenLoop.interleaved(ticker, List.of("fast", "slow"), List.of(fast, slow), 400,
        Duration.ofMillis(100), Duration.ofMillis(500), pools);
    List<Summary> second = OpenLoop.interleaved(ticker, List.of("fast", "slow"), List.of(fast, slow), 400,
        Duration.ofMillis(100), Duration.ofMillis(500), pools);

    // The warm-ups' calls are not in the pools: only what the summaries counted.
    for (int k = 0; k < 2; k++) {
      assertThat(pools.get(k).getTotalCount()).isEqualTo(first.get(k).count() + second.get(k).count()).isPositive();
    }
    // Each pool holds its own call's latencies: had the slow call's (5 ms) landed in the fast pool, half
    // of it would be slow.
    assertThat(Summary.percentile(pools.get(0), 100)).isLessThan(5);
    assertThat(Summary.percentile(pools.get(1), 50)).isGreaterThanOrEqualTo(5);
  }

  @Test
  void theRunEnds_onlyOnceTheLastAnswersAreIn() throws Exception {
    // Every request is answered at once but the last, which takes 200 ms: the calls catch up between
    // any two requests, and the last answer comes well after the last request was sent.
    int total = 100;
    Call late = ticker.answeredAfter(Duration.ofMillis(200));
    Call call = i -> i == total / 2 - 1 ? late.start(i) : CompletableFuture.completedFuture(null);
    List<Summary> both = interleaved(List.of("a", "b"), List.of(call, call), total, Duration.ZERO, Duration.ofSeconds(1));

    assertThat(both.get(0).count() + both.get(1).count()).isEqualTo(total);
    assertThat(both.get(1).max()).isGreaterThanOrEqualTo(200);
  }

  @Test
  void aStallFallsOnEveryCall() throws Exception {
    // One server for both, serial, that stalls once for 300 ms: requests of both calls queue behind it.
    Call call = ticker.serialServer(n -> Duration.ofMillis(n == 300 ? 300 : 0));
    List<Summary> both = interleaved(List.of("a", "b"), List.of(call, call), 400, Duration.ofMillis(200),
        Duration.ofSeconds(2));
    for (Summary s : both) {
      assertThat(s.p99()).as(s.name()).isGreaterThan(100);
    }
  }

  @Test
  void everyRoundHasEachCallOnce_inAnOrderOfItsOwn() {
    int n = 4;
    int rounds = 1_000;
    int[][] follows = new int[n][n];
    int previous = -1;
    for (long round = 0; round < rounds; round++) {
      boolean[] seen = new boolean[n];
      for (int k = 0; k < n; k++) {
        int call = OpenLoop.turn(round * n + k, n);
        assertThat(seen[call]).as("call %d twice in round %d", call, round).isFalse();
        seen[call] = true;
        if (previous >= 0) {
          follows[previous][call]++;
        }
        previous = call;
      }
    }
    // Each call is followed by each other call, not always by the same one (one in three of the time,
    // less its share of following itself across a round's end).
    for (int a = 0; a < n; a++) {
      for (int b = 0; b < n; b++) {
        if (a != b) {
          assertThat(follows[a][b]).as("%d followed by %d", a, b).isBetween(rounds / 5, rounds / 2);
        }
      }
    }
    assertThat(OpenLoop.turn(4_242, n)).isEqualTo(OpenLoop.turn(4_242, n));
  }
}
