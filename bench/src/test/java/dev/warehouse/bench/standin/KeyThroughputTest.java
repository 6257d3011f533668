package dev.warehouse.bench.standin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The stand-in's per-key write limit, on a clock the test moves: DynamoDB's 1,000 units a second, a second's burst. */
class KeyThroughputTest {

  private final KeyThroughput writes = new KeyThroughput(KeyThroughput.DYNAMODB_WRITE_UNITS);

  @Test
  void oneKeyTakes500TransactionalWritesASecond_andItsNeighboursKeepTheirOwn() {
    long t = 0;
    for (int i = 0; i < 500; i++) {
      assertThat(writes.take(List.of("RESERVATION#o" + i, "PRODUCT#hot"), 2, t)).isEmpty();
    }
    assertThat(writes.take(List.of("RESERVATION#late", "PRODUCT#hot"), 2, t)).containsExactly("PRODUCT#hot");
    assertThat(writes.take(List.of("PRODUCT#cold"), 2, t)).as("nothing taken from the others").isEmpty();
    // 2 ms refill two units: one more transactional write of the hot key.
    assertThat(writes.take(List.of("PRODUCT#hot"), 2, t + 2_000_000)).isEmpty();
    assertThat(writes.take(List.of("PRODUCT#hot"), 2, t + 2_000_000)).containsExactly("PRODUCT#hot");
  }

  @Test
  void aTransactionShortOnOneKey_takesNothingFromTheOthers() {
    for (int i = 0; i < 500; i++) {
      writes.take(List.of("PRODUCT#hot"), 2, 0);
    }
    assertThat(writes.take(List.of("PRODUCT#a", "PRODUCT#hot"), 2, 0)).containsExactly("PRODUCT#hot");
    for (int i = 0; i < 500; i++) {
      assertThat(writes.take(List.of("PRODUCT#a"), 2, 0)).as("PRODUCT#a still has all its units").isEmpty();
    }
  }

  @Test
  void aLimitOfZero_limitsNothing() {
    KeyThroughput off = new KeyThroughput(0);
    for (int i = 0; i < 10_000; i++) {
      assertThat(off.take(List.of("PRODUCT#hot"), 2, 0)).isEmpty();
    }
  }
}
