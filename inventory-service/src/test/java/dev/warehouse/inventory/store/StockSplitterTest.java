package dev.warehouse.inventory.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.testing.TestClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The hot-key detector's names turned into bucket counts: a stock item past the write rate is split
 * twice over, at the warehouse its holds went to; anything else (a cool item, another kind of key, a
 * product split all it can be) is left alone. Time is a test clock: no sleeps.
 */
class StockSplitterTest {

  private final TestClock clock = new TestClock(Instant.parse("2026-12-07T09:00:00Z"));
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final HotKeys hotKeys = new HotKeys(clock, meters, 0.5);
  // Only its memory of holds and counts is used here: no store.
  private final StockBuckets buckets = new StockBuckets(null, null, clock, Duration.ofHours(1));
  private final List<String> asked = new ArrayList<>();
  private StockSplitter splitter;

  @BeforeEach
  void start() {
    splitter = new StockSplitter(hotKeys, buckets, (product, warehouse, count) -> {
      asked.add(product + "@" + warehouse + "=" + count);
      return CompletableFuture.completedFuture(null);
    }, 500, meters);
  }

  /** {@code units} write units to {@code pk} under {@code pattern}, as requests of 2 units each, within a second. */
  private void writes(String pattern, String pk, int units) {
    for (int i = 0; i < units / 2; i++) {
      hotKeys.record(pattern, pk, 2);
    }
  }

  @Test
  void theStockPatterns_areTheRoutesThatWriteABucket_butW10sOwnMoves() {
    assertThat(StockSplitter.STOCK_WRITES).containsExactly("W2", "W3", "W6", "W8", "W9");
  }

  @Test
  void aStockItemPastTheRate_isSplitTwiceOver_atTheWarehouseItsHoldsWentTo() {
    writes("W6", "PRODUCT#P1", 400);
    writes("W9", "PRODUCT#P1", 200); // releases of the same item count with its holds
    for (int i = 0; i < 5; i++) {
      buckets.countHold("P1", "W2");
    }
    buckets.countHold("P1", "W1");

    assertThat(splitter.look()).isEqualTo(Map.of("P1", 2));
    assertThat(asked).containsExactly("P1@W2=2");
    assertThat(meters.get("stock.bucket.raises").counter().count()).isEqualTo(1);
  }

  @Test
  void aSplitProductsHotBucket_doublesItsCountAgain_upToTheMost() {
    buckets.learn(record("P1", "W1", 4));
    buckets.countHold("P1", "W1");
    writes("W6", "PRODUCT#P1#BUCKET#03", 600);
    assertThat(splitter.look()).isEqualTo(Map.of("P1", 8));

    buckets.learn(record("P1", "W1", 16));
    buckets.countHold("P1", "W1");
    assertThat(splitter.look()).as("16 is the most").isEmpty();
  }

  @Test
  void aCoolItem_anotherKindOfKey_orAProductNotHeldHere_isLeftAlone() {
    writes("W6", "PRODUCT#P1", 300);
    writes("W6", "RESERVATION#o-1", 900);
    writes("W6", "PRODUCT#P2", 900); // no hold of P2 counted in this process
    buckets.countHold("P1", "W1");
    assertThat(splitter.look()).isEmpty();
    assertThat(asked).isEmpty();
  }

  @Test
  void eachLook_countsTheHoldsSinceTheLastOne() {
    buckets.countHold("P1", "W1");
    assertThat(buckets.busiestSince()).containsOnlyKeys("P1");
    assertThat(buckets.busiestSince()).isEmpty();
  }

  private static Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> record(String product, String warehouse,
      int bucketCount) {
    return InventoryItems.toItem(new dev.warehouse.inventory.domain.ProductInventory(product, warehouse, 10, 0,
        Instant.parse("2026-12-07T08:00:00Z"), 0, bucketCount));
  }
}
