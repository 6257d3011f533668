package dev.warehouse.inventory.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.domain.ProductInventory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;

/**
 * The moves between a split stock's buckets, explored over seeded random states rather than a few
 * chosen ones: any mix of buckets that exist or are gone (a drop raced a raise), any count above, below or
 * past them, any units available and reserved. Whatever the state, a rebalance neither makes nor loses a
 * unit, never moves a reserved one, and gives units only to buckets that exist; W10's moves plus the
 * shares of the buckets it creates sum to what was available. Pure functions: 20,000 states in well under
 * a second.
 */
class StockBucketMovesTest {

  private static final Instant T = Instant.parse("2026-12-07T09:00:00Z");
  private static final long SEED = 20261207L;

  /** A random split stock: bucket 0 always there, the others each there or gone, a random count. */
  private static SplitStock state(Random random) {
    int kept = 1 + random.nextInt(ProductInventory.MAX_BUCKETS);
    List<Optional<StockChanges.Read>> buckets = new ArrayList<>();
    for (int b = 0; b < kept; b++) {
      if (b > 0 && random.nextInt(4) == 0) {
        buckets.add(Optional.empty());
        continue;
      }
      long reserved = random.nextInt(5);
      long available = random.nextInt(3) == 0 ? 0 : random.nextInt(50);
      buckets.add(Optional.of(new StockChanges.Read(
          new ProductInventory("p", "w", reserved + available, random.nextInt(4), T, reserved), true)));
    }
    return new SplitStock(buckets, 1 + random.nextInt(ProductInventory.MAX_BUCKETS));
  }

  @Test
  void aRebalance_neitherMakesNorLosesAUnit_andGivesOnlyToBucketsThatExist() {
    Random random = new Random(SEED);
    for (int i = 0; i < 10_000; i++) {
      SplitStock whole = state(random);
      SortedMap<Integer, StockChanges.Delta> moves = StockBuckets.moves(whole);
      String where = "state " + i + " (seed " + SEED + "): " + whole;
      assertThat(moves.values().stream().mapToLong(StockChanges.Delta::quantity).sum()).as(where).isZero();
      moves.forEach((b, delta) -> {
        StockChanges.Read bucket = whole.bucket(b).orElseThrow(() -> new AssertionError("moves into a gone bucket: " + where));
        assertThat(delta.reserved()).as(where).isZero();
        assertThat(bucket.stock().available() + delta.quantity()).as("bucket %d's available after, %s", b, where)
            .isNotNegative();
      });
    }
  }

  @Test
  void aSplit_sharesWhatWasAvailable_overTheBucketsThatExistAndThoseItCreates() {
    Random random = new Random(SEED + 1);
    for (int i = 0; i < 10_000; i++) {
      SplitStock whole = state(random);
      int count = 1 + random.nextInt(ProductInventory.MAX_BUCKETS);
      List<Integer> takers = StockBuckets.takers(whole, count, true);
      long available = StockBuckets.available(whole);
      long moved = StockBuckets.moves(whole, takers).values().stream().mapToLong(StockChanges.Delta::quantity).sum();
      long created = 0;
      for (int b = whole.kept(); b < count; b++) {
        created += StockBuckets.share(available, takers, b);
      }
      String where = "state " + i + " (seed " + SEED + "), count " + count + ": " + whole;
      assertThat(moved + created).as(where).isZero();
      long shared = takers.stream().mapToLong(b -> StockBuckets.share(available, takers, b)).sum();
      assertThat(shared).as(where).isEqualTo(available);
      assertThat(takers).as(where).allSatisfy(b -> assertThat(b < count || takers.equals(List.of(0))).isTrue());
    }
  }
}
