package dev.warehouse.runtime.paging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.error.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PageTokenCodecTest {

  private static final Map<String, String> LAST_KEY = Map.of("PK", "PRODUCT#P100", "SK", "WAREHOUSE#W2");
  private final PageTokenCodec codec = new PageTokenCodec("0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII));

  @Test
  void roundTrip_returnsTheLastKey_forTheSameScope() {
    String token = codec.encode("A3|PRODUCT#P100", LAST_KEY);
    assertThat(codec.decode("A3|PRODUCT#P100", token)).isEqualTo(LAST_KEY);
  }

  @Test
  void rotation_eachPhaseOpensTheOthersTokens_andAKeyNotListedIsRefused() {
    byte[] old = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    byte[] next = "fedcba9876543210fedcba9876543210".getBytes(StandardCharsets.US_ASCII);
    // Phase 1 seals with the old key and already opens the new one's tokens; phase 2 the reverse.
    PageTokenCodec phase1 = new PageTokenCodec(old, List.of(next));
    PageTokenCodec phase2 = new PageTokenCodec(next, List.of(old));
    PageTokenCodec done = new PageTokenCodec(next);
    String fromPhase1 = phase1.encode("A3|PRODUCT#P100", LAST_KEY);
    String fromPhase2 = phase2.encode("A3|PRODUCT#P100", LAST_KEY);
    assertThat(phase2.decode("A3|PRODUCT#P100", fromPhase1)).isEqualTo(LAST_KEY);
    assertThat(phase1.decode("A3|PRODUCT#P100", fromPhase2)).isEqualTo(LAST_KEY);
    assertThat(codec.decode("A3|PRODUCT#P100", fromPhase1)).as("sealed with the old key").isEqualTo(LAST_KEY);
    assertInvalid(() -> codec.decode("A3|PRODUCT#P100", fromPhase2));
    assertThat(done.decode("A3|PRODUCT#P100", fromPhase2)).isEqualTo(LAST_KEY);
    assertInvalid(() -> done.decode("A3|PRODUCT#P100", fromPhase1));
    // An accepted key still binds the token to its scope.
    assertInvalid(() -> phase2.decode("A3|PRODUCT#P200", fromPhase1));
  }

  @Test
  void token_isOpaque_keysAreNotReadable() {
    String token = codec.encode("A3|PRODUCT#P100", LAST_KEY);
    String decoded = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.ISO_8859_1);
    assertThat(decoded).doesNotContain("PRODUCT").doesNotContain("WAREHOUSE");
  }

  @Test
  void decode_rejectsTokenOfAnotherScope() {
    String token = codec.encode("A3|PRODUCT#P100", LAST_KEY);
    assertInvalid(() -> codec.decode("A3|PRODUCT#P200", token));
  }

  @Test
  void decode_rejectsEveryEditedByte() {
    byte[] raw = Base64.getUrlDecoder().decode(codec.encode("A3|PRODUCT#P100", LAST_KEY));
    for (int i = 0; i < raw.length; i++) {
      byte[] edited = raw.clone();
      edited[i] ^= 0x01;
      String forged = Base64.getUrlEncoder().withoutPadding().encodeToString(edited);
      assertInvalid(() -> codec.decode("A3|PRODUCT#P100", forged));
    }
  }

  @Test
  void decode_rejectsGarbageAndTokensOfAnotherKey() {
    assertInvalid(() -> codec.decode("s", "not base64 !"));
    assertInvalid(() -> codec.decode("s", ""));
    assertInvalid(() -> codec.decode("s", "AAAA"));
    assertInvalid(() -> codec.decode("s", "x".repeat(5000)));
    String foreign = PageTokenCodec.withRandomKey().encode("s", LAST_KEY);
    assertInvalid(() -> codec.decode("s", foreign));
  }

  private static void assertInvalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(InvalidArgumentException.class,
            e -> assertThat(e.violations()).singleElement().satisfies(v -> assertThat(v.field()).isEqualTo("page_token")));
  }
}
