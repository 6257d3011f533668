package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.testing.TestClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The bounds of the verified-token cache: its capacity, expiry, and the key set its entries belong to. */
class VerifiedTokensTest {

  private static final Instant NOW = Instant.parse("2026-07-26T10:00:00Z");
  private static final Caller ALICE = new Caller("alice", "jwt", Set.of("debugger"));
  private static final Object KEYS = new Object();

  @Test
  void whenFull_expiredEntriesGoFirst_thenAll() {
    TestClock clock = new TestClock(NOW);
    VerifiedTokens tokens = new VerifiedTokens(2, clock);
    tokens.put("short", ALICE, NOW.plusSeconds(10), KEYS);
    tokens.put("long", ALICE, NOW.plusSeconds(100), KEYS);
    clock.advance(Duration.ofSeconds(20));
    tokens.put("third", ALICE, NOW.plusSeconds(100), KEYS);
    assertThat(tokens.size()).isEqualTo(2);
    assertThat(tokens.get("long", KEYS)).isEqualTo(ALICE);
    assertThat(tokens.get("third", KEYS)).isEqualTo(ALICE);

    tokens.put("fourth", ALICE, NOW.plusSeconds(100), KEYS);
    assertThat(tokens.size()).as("nothing had expired: all dropped, the new one kept").isEqualTo(1);
    assertThat(tokens.get("fourth", KEYS)).isEqualTo(ALICE);
  }

  @Test
  void anEntry_answersOnlyForTheKeySetItWasVerifiedAgainst_andUntilItExpires() {
    TestClock clock = new TestClock(NOW);
    VerifiedTokens tokens = new VerifiedTokens(10, clock);
    tokens.put("token", ALICE, NOW.plusSeconds(10), KEYS);
    assertThat(tokens.get("token", new Object())).isNull();
    assertThat(tokens.get("token", KEYS)).as("forgotten once seen with another key set").isNull();
    tokens.put("token", ALICE, NOW.plusSeconds(10), KEYS);
    clock.advance(Duration.ofSeconds(10));
    assertThat(tokens.get("token", KEYS)).isNull();
    assertThat(tokens.size()).isZero();
  }

  @Test
  void capacityZero_remembersNothing() {
    VerifiedTokens tokens = new VerifiedTokens(0, new TestClock(NOW));
    tokens.put("token", ALICE, NOW.plusSeconds(10), KEYS);
    assertThat(tokens.get("token", KEYS)).isNull();
    assertThat(tokens.size()).isZero();
  }
}
