package dev.warehouse.bench.scenario.writeshards;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.warehouse.runtime.moto.MotoProcess;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The arithmetic behind scenario 6's figures: shard shares, when the detector named the key, Zipf's shares. */
class WriteShardsTest {

  @Test
  void largestShare_isTheBiggestShardsPartOfAllMarkerWrites() {
    assertThat(WriteShardsReport.largestShare(Map.of("LOW_STOCK#00", 30L, "LOW_STOCK#01", 10L))).isEqualTo(0.75);
    assertThat(WriteShardsReport.largestShare(Map.of("LOW_STOCK#00", 7L))).isEqualTo(1.0);
    assertThat(WriteShardsReport.largestShare(Map.of())).isZero();
  }

  @Test
  void merged_addsReadsAndWritesOfEachKey() {
    assertThat(HotKeySampler.merged(new MotoProcess.KeyCounts(Map.of("A", 2L, "B", 1L), Map.of("A", 3L, "C", 4L))))
        .containsExactlyInAnyOrderEntriesOf(Map.of("A", 5L, "B", 1L, "C", 4L));
  }

  @Test
  void firstNamed_needsTheRightKey_withinTheTolerance() {
    List<Observation> polls = List.of(
        new Observation(0.25, "", 0, 0, "PRODUCT#C000", 0.3),
        new Observation(0.5, "PRODUCT#C001", 0.4, 0.2, "PRODUCT#C000", 0.3), // another key
        new Observation(0.75, "PRODUCT#C000", 0.40, 0.30, "PRODUCT#C000", 0.3), // 10 points off
        new Observation(1.0, "PRODUCT#C000", 0.33, 0.30, "PRODUCT#C000", 0.3),
        new Observation(1.25, "PRODUCT#C000", 0.31, 0.30, "PRODUCT#C000", 0.3));
    assertThat(WriteShardsReport.firstNamed(polls, "PRODUCT#C000", 0.05)).hasValue(1.0);
    assertThat(WriteShardsReport.firstNamed(polls, "PRODUCT#C000", 0.005)).isEmpty();
    assertThat(WriteShardsReport.firstNamed(polls, "LOW_STOCK#00", 0.05)).isEmpty();
    assertThat(polls).filteredOn(o -> o.right(0.05)).extracting(Observation::seconds).containsExactly(1.0, 1.25);
    // A near tie counts as right: the detector may name either of two keys half a point apart.
    assertThat(new Observation(2, "LOW_STOCK#00", 0.25, 0.248, "PRODUCT#C000", 0.251).right(0.05)).isTrue();
  }

  @Test
  void zipfShares_sumToOne_andTheCelebrityLeads() {
    double sum = 0;
    for (int k = 0; k < WriteShards.PRODUCTS; k++) {
      sum += WriteShardsReport.zipfShare(k);
    }
    assertThat(sum).isCloseTo(1.0, within(1e-9));
    assertThat(WriteShardsReport.zipfShare(0)).isGreaterThan(WriteShardsReport.zipfShare(1)).isBetween(0.2, 0.3);
  }

  @Test
  void shardsOfCelebrity_countsDistinctShards() {
    assertThat(WriteShardsReport.shardsOfCelebrity(1)).isEqualTo(1);
    assertThat(WriteShardsReport.shardsOfCelebrity(64)).isBetween(1L, (long) WriteShards.WAREHOUSES);
  }

  @Test
  void truth_isTheKeysShareOverTheDetectorsWindow_notSinceTheStart() {
    long slot = dev.warehouse.runtime.hotkeys.HotKeys.SLOT.toMillis();
    long t0 = 1_000 * slot; // a slot boundary
    HotKeySampler.Truth truth = new HotKeySampler.Truth();
    truth.add(t0, Map.of("A", 100L, "B", 100L));
    truth.add(t0 + 6 * slot, Map.of("A", 100L, "B", 100L));
    truth.add(t0 + 7 * slot, Map.of("A", 130L, "B", 100L, "C", 10L));
    // At t0 + 7 slots the window began at t0 + 2 slots; the last snapshot by then is t0's: only what came after counts.
    assertThat(truth.share("A", t0 + 7 * slot)).isCloseTo(30.0 / 40, within(1e-9));
    // Early on, the window reaches back before the first snapshot: everything counted so far.
    assertThat(truth.share("A", t0)).isEqualTo(0.5);
    assertThat(HotKeySampler.minus(Map.of("A", 5L, "B", 2L), Map.of("A", 3L, "B", 2L))).containsExactly(Map.entry("A", 2L));
  }
}
