package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.BitSet;
import org.junit.jupiter.api.Test;

/** The done-shards part of a fanned-out page token: one hex digit per four shards, read back exactly. */
class ShardMaskTest {

  @Test
  void roundTrips_forEveryShardCount() {
    for (int shards : new int[] {1, 3, 4, 16, 64, 100}) {
      BitSet done = new BitSet();
      for (int i = 0; i < shards; i += 3) {
        done.set(i);
      }
      String mask = ShardedPage.shardMask(done, shards);
      assertThat(mask).hasSize((shards + 3) / 4);
      assertThat(ShardedPage.shardMask(mask, shards)).contains(done);
    }
    BitSet first = new BitSet();
    first.set(0);
    assertThat(ShardedPage.shardMask(first, 16)).isEqualTo("1000");
  }

  @Test
  void refusesAnotherLength_otherDigits_andBitsBeyondTheCount() {
    assertThat(ShardedPage.shardMask("000", 16)).isEmpty();
    assertThat(ShardedPage.shardMask("00000", 16)).isEmpty();
    assertThat(ShardedPage.shardMask("000g", 16)).isEmpty();
    assertThat(ShardedPage.shardMask("000F", 16)).isEmpty();
    assertThat(ShardedPage.shardMask("4", 2)).isEmpty(); // bit 2 of a two-shard mask
    assertThat(ShardedPage.shardMask((String) null, 4)).isEmpty();
  }
}
