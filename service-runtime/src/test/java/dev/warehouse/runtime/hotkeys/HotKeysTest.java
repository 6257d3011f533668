package dev.warehouse.runtime.hotkeys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.warehouse.testing.LogRecords;
import dev.warehouse.testing.TestClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The hot-key sketch, on an injected clock: no test sleeps. */
class HotKeysTest {



  /** On a slot boundary, so the tests know which slot each request falls in. */
  private static final Instant START = Instant.parse("2026-07-26T10:00:00Z");

  private final TestClock clock = new TestClock(START);
  private final MeterRegistry meters = new SimpleMeterRegistry();
  private LogRecords logged;

  @BeforeEach
  void captureLog() {
    logged = new LogRecords(HotKeys.class);
  }

  @AfterEach
  void releaseLog() {
    logged.close();
  }

  private static HotKeys.PatternReport only(List<HotKeys.PatternReport> reports) {
    assertThat(reports).hasSize(1);
    return reports.get(0);
  }

  private double gauge(String name, String pattern) {
    return meters.get(name).tag("pattern", pattern).gauge().value();
  }

  @Test
  void memoryStaysBounded_whateverTheNumberOfKeys() {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
    // A million distinct keys over 100 s: through every slot of the ring, and round it again.
    for (int second = 0; second < 100; second++) {
      for (int i = 0; i < 10_000; i++) {
        hotKeys.record("A1", "SERIAL#" + (second * 10_000 + i), 0.5);
      }
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(hotKeys.trackedKeys()).isLessThanOrEqualTo(HotKeys.SLOTS * HotKeys.COUNTERS_PER_SLOT);
    HotKeys.PatternReport a1 = only(hotKeys.report(Optional.empty(), 20));
    assertThat(a1.keys()).hasSize(HotKeys.TOP_K);
    assertThat(a1.requests()).as("the window's request count is exact: seconds 50 to 99").isEqualTo(500_000);
  }

  @Test
  void findsAZipfSkewedCelebrity_withinFivePoints() {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
    int keys = 100_000;
    double[] cdf = zipfCdf(keys, 1.1);
    Random random = new Random(42);
    Map<String, Integer> truth = new HashMap<>();
    int requests = 300_000;
    for (int i = 0; i < requests; i++) {
      int rank = Arrays.binarySearch(cdf, random.nextDouble());
      String key = "PRODUCT#P" + (rank < 0 ? -rank - 1 : rank);
      truth.merge(key, 1, Integer::sum);
      hotKeys.record("A2", key, 0.5);
      if (i % 10_000 == 0) {
        clock.advance(Duration.ofSeconds(1)); // 30 s: the counts span several slots
      }
    }
    String celebrity = "PRODUCT#P0";
    double trueShare = (double) truth.get(celebrity) / requests;
    assertThat(trueShare).as("the skew this test is about").isBetween(0.05, 0.5);

    HotKeys.PatternReport a2 = only(hotKeys.report(Optional.of("A2"), 10));
    assertThat(a2.keys().get(0).partitionKey()).isEqualTo(celebrity);
    assertThat(a2.keys().get(0).share()).isCloseTo(trueShare, within(0.05));
    assertThat(a2.keys().get(1).partitionKey()).isEqualTo("PRODUCT#P1");
    assertThat(a2.keys().get(1).share()).isCloseTo((double) truth.get("PRODUCT#P1") / requests, within(0.05));
    assertThat(gauge(HotKeys.SHARE_METRIC, "A2")).isCloseTo(trueShare, within(0.05));
  }

  @Test
  void oneCelebrityAmongUniformKeys_isFoundWithinFivePoints() {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
    Random random = new Random(7);
    for (int i = 0; i < 100_000; i++) {
      hotKeys.record("A6", random.nextInt(100) < 30 ? "ORDER#celebrity" : "ORDER#" + random.nextInt(1_000_000), 0.5);
    }
    HotKeys.PatternReport a6 = only(hotKeys.report(Optional.empty(), 20));
    assertThat(a6.keys().get(0).partitionKey()).isEqualTo("ORDER#celebrity");
    assertThat(a6.keys().get(0).share()).isCloseTo(0.30, within(0.05));
  }

  @Test
  void countsDecay_afterTheWindow() {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
    for (int i = 0; i < 100; i++) {
      hotKeys.record("A2", "PRODUCT#old", 1.0);
    }
    clock.advance(Duration.ofSeconds(35));
    for (int i = 0; i < 50; i++) {
      hotKeys.record("A2", "PRODUCT#new", 1.0);
    }
    assertThat(only(hotKeys.report(Optional.empty(), 10)).keys()).extracting(HotKeys.KeyReport::partitionKey)
        .containsExactly("PRODUCT#old", "PRODUCT#new");
    assertThat(gauge(HotKeys.SHARE_METRIC, "A2")).isCloseTo(100 / 150.0, within(1e-9));

    clock.advance(Duration.ofSeconds(25)); // the first slot has left the window
    HotKeys.PatternReport a2 = only(hotKeys.report(Optional.empty(), 10));
    assertThat(a2.requests()).isEqualTo(50);
    assertThat(a2.keys()).extracting(HotKeys.KeyReport::partitionKey).containsExactly("PRODUCT#new");
    assertThat(gauge(HotKeys.SHARE_METRIC, "A2")).isEqualTo(1.0);

    clock.advance(HotKeys.WINDOW);
    assertThat(hotKeys.report(Optional.empty(), 10)).as("a pattern without requests in the window").isEmpty();
    assertThat(gauge(HotKeys.SHARE_METRIC, "A2")).as("the gauge stays, at zero").isZero();
    assertThat(gauge(HotKeys.CAPACITY_METRIC, "A2")).isZero();
  }

  @Test
  void ratesAndCapacity_areOverTheTimeCovered() {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
    clock.advance(Duration.ofSeconds(5));
    for (int i = 0; i < 100; i++) {
      hotKeys.record("W3", "PRODUCT#P1", 2.0);
    }
    for (int i = 0; i < 100; i++) {
      hotKeys.record("W3", "PRODUCT#P2", 1.0);
    }
    clock.advance(Duration.ofSeconds(5)); // the process started 10 s ago: rates are over those 10 s
    HotKeys.PatternReport w3 = only(hotKeys.report(Optional.empty(), 10));
    assertThat(hotKeys.window()).isEqualTo(Duration.ofSeconds(10));
    assertThat(w3.requestsPerSecond()).isCloseTo(20.0, within(1e-9));
    HotKeys.KeyReport hottest = w3.keys().get(0);
    assertThat(hottest.requests()).isEqualTo(100);
    assertThat(hottest.requestsPerSecond()).isCloseTo(10.0, within(1e-9));
    assertThat(hottest.share()).isCloseTo(0.5, within(1e-9));
    assertThat(hottest.capacityUnits()).isCloseTo(200.0, within(1e-9));
    assertThat(hottest.capacityUnitsPerSecond()).isCloseTo(20.0, within(1e-9));
    assertThat(gauge(HotKeys.CAPACITY_METRIC, "W3")).isCloseTo(hottest.capacityUnitsPerSecond(), within(1e-9));

    clock.advance(Duration.ofMinutes(10)); // a long-running process: rates over the window, at most a minute
    hotKeys.record("W3", "PRODUCT#P1", 1.0);
    assertThat(hotKeys.window()).isLessThanOrEqualTo(HotKeys.WINDOW)
        .isGreaterThanOrEqualTo(HotKeys.WINDOW.minus(HotKeys.SLOT));
  }

  @Test
  void report_filtersByPattern_andLimitsItsKeys() {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
    for (int i = 0; i < 30; i++) {
      for (int j = 0; j <= i; j++) {
        hotKeys.record("A3", "PRODUCT#P" + i, 0.5);
      }
      hotKeys.record("A5", "CUSTOMER#C" + i, 0.5);
    }
    assertThat(hotKeys.report(Optional.empty(), 10)).extracting(HotKeys.PatternReport::patternId).containsExactly("A3", "A5");
    HotKeys.PatternReport a3 = only(hotKeys.report(Optional.of("A3"), 3));
    assertThat(a3.keys()).extracting(HotKeys.KeyReport::partitionKey).containsExactly("PRODUCT#P29", "PRODUCT#P28", "PRODUCT#P27");
    assertThat(only(hotKeys.report(Optional.of("A3"), 100)).keys()).hasSize(HotKeys.TOP_K);
    assertThat(hotKeys.report(Optional.of("A9"), 10)).isEmpty();
  }

  @Test
  void concurrentUpdates_loseNoCount() throws Exception {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
    int threads = 4;
    int perThread = 100_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<CompletableFuture<Void>> writers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int seed = t;
        writers.add(CompletableFuture.runAsync(() -> {
          await(go);
          Random random = new Random(seed);
          for (int i = 0; i < perThread; i++) {
            hotKeys.record("A2", i % 2 == 0 ? "PRODUCT#celebrity" : "PRODUCT#" + random.nextInt(50_000), 1.0);
          }
        }, pool));
      }
      // A reader (the scrape, ListHotKeys) runs meanwhile.
      CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
        await(go);
        while (writers.stream().anyMatch(w -> !w.isDone())) {
          hotKeys.report(Optional.empty(), 20);
          io.micrometer.core.instrument.Gauge share = meters.find(HotKeys.SHARE_METRIC).tag("pattern", "A2").gauge();
          assertThat(share == null ? 0 : share.value()).isBetween(0.0, 1.0);
        }
      }, pool);
      go.countDown();
      CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      reader.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    HotKeys.PatternReport a2 = only(hotKeys.report(Optional.empty(), 20));
    assertThat(a2.requests()).isEqualTo((long) threads * perThread);
    // The celebrity held its counter from its first request: its count is exact.
    assertThat(a2.keys().get(0).partitionKey()).isEqualTo("PRODUCT#celebrity");
    assertThat(a2.keys().get(0).requests()).isEqualTo((long) threads * perThread / 2);
    assertThat(a2.keys().get(0).capacityUnits()).isEqualTo(threads * perThread / 2.0);
  }

  @Test
  void logsAKeyReachingTheShare_oncePerKeyPerWindow() {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
    for (int i = 0; i < 63; i++) {
      hotKeys.record("A2", "PRODUCT#P100", 0.5);
    }
    for (int i = 0; i < 37; i++) {
      hotKeys.record("A2", "PRODUCT#other" + i, 0.5);
    }
    for (int i = 0; i < 99; i++) {
      hotKeys.record("A6", "ORDER#O900", 0.5); // all of its pattern, but too few requests to mean anything
    }
    hotKeys.logHotKeys();
    assertThat(logged.events()).hasSize(1);
    LogRecords.Logged hot = logged.events().get(0);
    assertThat(hot.level()).isEqualTo("WARN");
    assertThat(hot.fields()).containsEntry("event", "hot_key").containsEntry("pattern", "A2").containsEntry("share", 0.63)
        .containsEntry("key", "PRODUCT#P100").containsEntry("requests", 63L).containsEntry("pattern_requests", 100L)
        .containsEntry("threshold", 0.5).containsKeys("requests_per_second", "capacity_units_per_second", "window_s");

    clock.advance(HotKeys.SLOT);
    hotKeys.record("A2", "PRODUCT#P100", 0.5);
    hotKeys.logHotKeys();
    assertThat(logged.events()).as("once per key per window").hasSize(1);

    clock.advance(HotKeys.WINDOW);
    for (int i = 0; i < 100; i++) {
      hotKeys.record("A2", "PRODUCT#P100", 0.5);
    }
    hotKeys.logHotKeys();
    assertThat(logged.events()).hasSize(2);
    assertThat(logged.events().get(1).fields()).containsEntry("event", "hot_key").containsEntry("pattern", "A2")
        .containsEntry("share", 1.0).containsEntry("key", "PRODUCT#P100");
  }

  @Test
  void logsNothing_belowTheShare() {
    HotKeys hotKeys = new HotKeys(clock, meters, 0.95);
    for (int i = 0; i < 1000; i++) {
      hotKeys.record("A2", i % 10 == 0 ? "PRODUCT#rare" : "PRODUCT#P100", 0.5);
    }
    hotKeys.logHotKeys();
    assertThat(logged.events()).isEmpty();
  }

  private static double[] zipfCdf(int n, double exponent) {
    double[] cdf = new double[n];
    double sum = 0;
    for (int i = 0; i < n; i++) {
      sum += 1 / Math.pow(i + 1, exponent);
      cdf[i] = sum;
    }
    for (int i = 0; i < n; i++) {
      cdf[i] /= sum;
    }
    return cdf;
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
