package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import dev.warehouse.runtime.error.UnauthenticatedException;
import dev.warehouse.testing.TestClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The token checks on a fixed clock: the skew's edges, the algorithm allow-list, and where roles come from. */
class JwtVerifierTest {

  private static final Instant NOW = Instant.parse("2026-07-26T10:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  private static final RSAKey RSA = TestTokens.rsaKey("rsa-1");
  private static final ECKey EC = TestTokens.ecKey("ec-1");

  private static JwtVerifier verifier(Set<JWSAlgorithm> algorithms, String rolesClaim) {
    return new JwtVerifier(new ImmutableJWKSet<SecurityContext>(new JWKSet(List.of(RSA.toPublicJWK(), EC.toPublicJWK()))),
        algorithms, TestTokens.ISSUER, TestTokens.AUDIENCE, rolesClaim, Duration.ofSeconds(60), CLOCK);
  }

  private static final JwtVerifier VERIFIER = verifier(Set.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256), "roles");

  private static String reason(JwtVerifier verifier, String token) {
    UnauthenticatedException e = catchThrowableOfType(UnauthenticatedException.class, () -> verifier.verify(token));
    assertThat(e).as("the token should be refused").isNotNull();
    assertThat(e.getMessage()).doesNotContain(token);
    return e.reason();
  }

  private static JWTClaimsSet expiringAt(Instant exp) {
    return TestTokens.claims("alice", NOW, "debugger").expirationTime(Date.from(exp)).build();
  }

  /** A key source that counts how often the verifier asks it for keys: once per signature checked. */
  private static final class CountingKeys implements JWKSource<SecurityContext> {
    final ImmutableJWKSet<SecurityContext> keys = new ImmutableJWKSet<>(new JWKSet(List.of(EC.toPublicJWK())));
    int asked;

    @Override
    public List<JWK> get(JWKSelector selector, SecurityContext context) throws KeySourceException {
      asked++;
      return keys.get(selector, context);
    }
  }

  /** An ES256 verifier on {@code keys}, remembering up to {@code cachedTokens} verified tokens. */
  private static JwtVerifier es256(JWKSource<SecurityContext> keys, Clock clock, int cachedTokens) {
    return new JwtVerifier(keys, Set.of(JWSAlgorithm.ES256), TestTokens.ISSUER, TestTokens.AUDIENCE, "roles",
        Duration.ofSeconds(60), clock, cachedTokens);
  }

  @Test
  void aVerifiedToken_isRemembered_andItsSignatureNotCheckedAgain() {
    CountingKeys keys = new CountingKeys();
    JwtVerifier verifier = es256(keys, CLOCK, 10);
    String token = TestTokens.sign(EC, TestTokens.claims("alice", NOW, "debugger").build());
    assertThat(verifier.verify(token).identity()).isEqualTo("alice");
    assertThat(verifier.verify(token).roles()).containsExactly("debugger");
    assertThat(keys.asked).isEqualTo(1);
    // A refused token is not remembered: each try is checked again.
    String other = TestTokens.sign(TestTokens.ecKey("ec-1"), TestTokens.claims("mallory", NOW, "admin").build());
    assertThat(reason(verifier, other)).isEqualTo("TOKEN_SIGNATURE_INVALID");
    assertThat(reason(verifier, other)).isEqualTo("TOKEN_SIGNATURE_INVALID");
    assertThat(keys.asked).isEqualTo(3);
    assertThat(verifier.cachedTokens()).isEqualTo(1);
  }

  @Test
  void withoutACache_everyCallChecksTheSignature() {
    CountingKeys keys = new CountingKeys();
    JwtVerifier verifier = es256(keys, CLOCK, 0);
    String token = TestTokens.sign(EC, TestTokens.claims("alice", NOW, "debugger").build());
    verifier.verify(token);
    verifier.verify(token);
    assertThat(keys.asked).isEqualTo(2);
    assertThat(verifier.cachedTokens()).isZero();
  }

  @Test
  void aRememberedToken_expiresAsTheVerifierWouldJudgeIt() {
    TestClock clock = new TestClock(NOW);
    JwtVerifier verifier = es256(new CountingKeys(), clock, 10);
    String token = TestTokens.sign(EC, expiringAt(NOW.plusSeconds(300)));
    assertThat(verifier.verify(token).identity()).isEqualTo("alice");
    clock.advance(Duration.ofSeconds(359));
    assertThat(verifier.verify(token).identity()).as("within exp plus the skew").isEqualTo("alice");
    clock.advance(Duration.ofSeconds(2));
    assertThat(reason(verifier, token)).isEqualTo("TOKEN_EXPIRED");
  }

  @Test
  void aRememberedToken_isCheckedAgainOnceTheJwksChanges_andRefusedWhenItsKeyIsGone() throws Exception {
    Path jwks = Files.createTempDirectory("verified-tokens-test").resolve("jwks.json");
    ECKey next = TestTokens.ecKey("ec-2");
    TestTokens.writeJwks(jwks, EC, next);
    // Read again by hand: the timer's hour never passes in the test.
    try (JwksSource source = JwksSource.ofFile(jwks, Duration.ofHours(1))) {
      JwtVerifier verifier = es256(source, CLOCK, 10);
      String token = TestTokens.sign(EC, TestTokens.claims("alice", NOW, "debugger").build());
      assertThat(verifier.verify(token).identity()).isEqualTo("alice");
      TestTokens.writeJwks(jwks, next);
      assertThat(source.refresh()).isNull();
      assertThat(reason(verifier, token)).isEqualTo("TOKEN_KEY_UNKNOWN");
    }
  }

  @Test
  void expiry_isForgivenWithinTheSkew_andNotBeyond() {
    assertThat(VERIFIER.verify(TestTokens.sign(RSA, expiringAt(NOW.minusSeconds(59)))).identity()).isEqualTo("alice");
    assertThat(reason(VERIFIER, TestTokens.sign(RSA, expiringAt(NOW.minusSeconds(61))))).isEqualTo("TOKEN_EXPIRED");
  }

  @Test
  void notBefore_isForgivenWithinTheSkew_andNotBeyond() {
    JWTClaimsSet soon = TestTokens.claims("alice", NOW, "debugger").notBeforeTime(Date.from(NOW.plusSeconds(59))).build();
    JWTClaimsSet later = TestTokens.claims("alice", NOW, "debugger").notBeforeTime(Date.from(NOW.plusSeconds(61))).build();
    assertThat(VERIFIER.verify(TestTokens.sign(EC, soon)).identity()).isEqualTo("alice");
    assertThat(reason(VERIFIER, TestTokens.sign(EC, later))).isEqualTo("TOKEN_NOT_YET_VALID");
  }

  @Test
  void aTokenWithoutExpiry_isRefused() {
    JWTClaimsSet forever = TestTokens.claims("alice", NOW, "debugger").expirationTime(null).build();
    assertThat(reason(VERIFIER, TestTokens.sign(RSA, forever))).isEqualTo("TOKEN_CLAIMS_REJECTED");
  }

  @Test
  void onlyAllowListedAlgorithms_areAccepted() {
    JwtVerifier rsaOnly = verifier(Set.of(JWSAlgorithm.RS256), "roles");
    JWTClaimsSet claims = TestTokens.claims("alice", NOW, "debugger").build();
    assertThat(rsaOnly.verify(TestTokens.sign(RSA, claims)).via()).isEqualTo("jwt");
    assertThat(reason(rsaOnly, TestTokens.sign(EC, claims))).isEqualTo("TOKEN_ALGORITHM_REJECTED");
    assertThat(reason(rsaOnly, TestTokens.unsecured(claims))).isEqualTo("TOKEN_ALGORITHM_REJECTED");
  }

  @Test
  void accessTokenTyp_isAccepted_andOtherTypsAreMalformed() {
    JWTClaimsSet claims = TestTokens.claims("alice", NOW, "debugger").build();
    assertThat(VERIFIER.verify(TestTokens.sign(RSA, claims, h -> h.type(new JOSEObjectType("at+jwt")))).identity())
        .isEqualTo("alice");
    assertThat(VERIFIER.verify(TestTokens.sign(RSA, claims, h -> h.type(null))).identity()).isEqualTo("alice");
    assertThat(reason(VERIFIER, TestTokens.sign(RSA, claims, h -> h.type(new JOSEObjectType("secevent+jwt")))))
        .isEqualTo("TOKEN_MALFORMED");
  }

  @Test
  void aKeyOfOneTypeCannotVouchForAnother() {
    // An EC token that names the RSA key's id: no key of the JWKS is an EC key with that id.
    JWTClaimsSet claims = TestTokens.claims("alice", NOW, "admin").build();
    String confused = TestTokens.sign(EC, claims, header -> header.keyID(RSA.getKeyID()));
    assertThat(reason(VERIFIER, confused)).isEqualTo("TOKEN_KEY_UNKNOWN");
  }

  @Test
  void roles_comeFromTheConfiguredClaim_asAListOrASpaceSeparatedString() {
    JWTClaimsSet list = TestTokens.claims("alice", NOW).claim("groups", List.of("picker", "buyer")).build();
    JWTClaimsSet string = TestTokens.claims("bob", NOW).claim("groups", "picker  storefront").build();
    JwtVerifier groups = verifier(Set.of(JWSAlgorithm.RS256), "groups");
    assertThat(groups.verify(TestTokens.sign(RSA, list)).roles()).containsExactlyInAnyOrder("picker", "buyer");
    assertThat(groups.verify(TestTokens.sign(RSA, string)).roles()).containsExactlyInAnyOrder("picker", "storefront");
    // The default claim is not read when another is configured.
    assertThat(groups.verify(TestTokens.sign(RSA, TestTokens.claims("carol", NOW, "admin").build())).roles()).isEmpty();
  }
}
