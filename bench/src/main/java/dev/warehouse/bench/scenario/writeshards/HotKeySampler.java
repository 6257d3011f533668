package dev.warehouse.bench.scenario.writeshards;

import dev.warehouse.admin.v1.AccessPatternHotKeys;
import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.HotKey;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.bench.target.Target.Op;
import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.runtime.moto.MotoProcess;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The hot-key detector and moto's counts, polled every {@link #POLL_MS} on a thread of its own while the
 * celebrity workload runs: each poll after the skew began is an {@link Observation}.
 */
final class HotKeySampler {

  static final long POLL_MS = 250;
  static final String PATTERN = Op.ADJUST_STOCK.patternId();

  private final Truth truth = new Truth();
  private final List<Observation> observations = new CopyOnWriteArrayList<>();
  private final AtomicLong skewFrom = new AtomicLong(Long.MAX_VALUE);
  private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();

  private HotKeySampler() {}

  static HotKeySampler start(AdminServiceGrpc.AdminServiceBlockingStub admin, MotoProcess moto, String table) {
    HotKeySampler sampler = new HotKeySampler();
    sampler.poller.scheduleAtFixedRate(
        () -> observe(admin, moto, table, sampler.truth, sampler.skewFrom.get()).ifPresent(sampler.observations::add),
        0, POLL_MS, TimeUnit.MILLISECONDS);
    return sampler;
  }

  /** The skew begins now: polls from here on are observations, timed from here. */
  void skewBegins() {
    skewFrom.set(System.currentTimeMillis());
  }

  void stop() throws InterruptedException {
    poller.shutdown();
    poller.awaitTermination(10, TimeUnit.SECONDS);
  }

  /** The observations so far, in the order polled. */
  List<Observation> observations() {
    return List.copyOf(observations);
  }

  /**
   * moto's counts as they were at each poll, so that a key's true share can be taken over the same
   * window the detector reports on: its current slot and the five before it ({@link HotKeys#WINDOW}).
   */
  static final class Truth {
    private final java.util.NavigableMap<Long, Map<String, Long>> snapshots = new java.util.TreeMap<>();

    synchronized void add(long atMillis, Map<String, Long> counts) {
      snapshots.put(atMillis, counts);
    }

    /** {@code key}'s share of the requests counted in the detector's window at {@code nowMillis}. */
    synchronized double share(String key, long nowMillis) {
      Map<String, Long> inWindow = inWindow(nowMillis);
      long total = inWindow.values().stream().mapToLong(Long::longValue).sum();
      return total == 0 ? 0 : (double) inWindow.getOrDefault(key, 0L) / total;
    }

    /** The key with the most requests in the detector's window at {@code nowMillis}; "" when none. */
    synchronized String hottest(long nowMillis) {
      return inWindow(nowMillis).entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse("");
    }

    private Map<String, Long> inWindow(long nowMillis) {
      Map<String, Long> now = snapshots.floorEntry(nowMillis).getValue();
      long windowStart = (Math.floorDiv(nowMillis, HotKeys.SLOT.toMillis()) - HotKeys.SLOTS + 1) * HotKeys.SLOT.toMillis();
      Map.Entry<Long, Map<String, Long>> before = snapshots.floorEntry(windowStart);
      return before == null ? now : minus(now, before.getValue());
    }
  }

  /**
   * What the detector names now, and the true share of that key over the detector's window (reads and
   * writes: what the service counts); empty before the skew begins.
   */
  private static Optional<Observation> observe(AdminServiceGrpc.AdminServiceBlockingStub admin, MotoProcess moto,
      String table, Truth truth, long skewFrom) {
    try {
      List<AccessPatternHotKeys> patterns = admin.withDeadlineAfter(2, TimeUnit.SECONDS)
          .listHotKeys(ListHotKeysRequest.newBuilder().setPatternId(PATTERN).setLimit(1).build()).getAccessPatternsList();
      long now = System.currentTimeMillis();
      truth.add(now, merged(moto.keyCounts(table)));
      if (now < skewFrom) {
        return Optional.empty();
      }
      Optional<HotKey> top = patterns.stream().flatMap(p -> p.getHotKeysList().stream()).findFirst();
      String key = top.map(HotKey::getPartitionKey).orElse("");
      String hottest = truth.hottest(now);
      return Optional.of(new Observation((now - skewFrom) / 1000.0, key, top.map(HotKey::getShare).orElse(0.0),
          truth.share(key, now), hottest, truth.share(hottest, now)));
    } catch (RuntimeException e) {
      return Optional.empty(); // a poll that failed names nothing; the next one is 250 ms away
    }
  }

  static Map<String, Long> minus(Map<String, Long> later, Map<String, Long> earlier) {
    Map<String, Long> difference = new HashMap<>();
    later.forEach((key, n) -> {
      long d = n - earlier.getOrDefault(key, 0L);
      if (d > 0) {
        difference.put(key, d);
      }
    });
    return difference;
  }

  /** Reads and writes per key: the requests that went to each partition. */
  static Map<String, Long> merged(MotoProcess.KeyCounts counts) {
    Map<String, Long> all = new HashMap<>(counts.reads());
    counts.writes().forEach((key, n) -> all.merge(key, n, Long::sum));
    return all;
  }
}
