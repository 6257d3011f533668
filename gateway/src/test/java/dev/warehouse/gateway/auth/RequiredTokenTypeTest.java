package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.proc.SecurityContext;
import dev.warehouse.runtime.error.UnauthenticatedException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code AUTH_JWT_TYPE=at+jwt} (RFC 9068): an ID token from the same provider, signed by the same key for the same
 * audience, is then refused; without the setting, any of the accepted types passes, as before.
 */
class RequiredTokenTypeTest {

  private static final Instant NOW = Instant.parse("2026-07-26T10:00:00Z");
  private static final ECKey KEY = TestTokens.ecKey("ec-1");

  private static JwtVerifier verifier(Optional<String> requiredType) {
    return new JwtVerifier(new ImmutableJWKSet<SecurityContext>(new JWKSet(KEY.toPublicJWK())), Set.of(JWSAlgorithm.ES256),
        TestTokens.ISSUER, TestTokens.AUDIENCE, "roles", Duration.ofSeconds(60), Clock.fixed(NOW, ZoneOffset.UTC), 0,
        requiredType);
  }

  private static String token(JOSEObjectType type) {
    return TestTokens.sign(KEY, TestTokens.claims("alice", NOW, "debugger").build(), header -> header.type(type));
  }

  @Test
  void withAtJwtRequired_anAccessTokenPasses_andAnIdTokenOrAnUntypedOneIsRefused() {
    JwtVerifier verifier = verifier(Optional.of("at+jwt"));
    assertThat(verifier.verify(token(new JOSEObjectType("at+jwt"))).identity()).isEqualTo("alice");
    assertThat(verifier.verify(token(new JOSEObjectType("application/at+jwt"))).identity()).isEqualTo("alice");

    for (JOSEObjectType type : new JOSEObjectType[] {JOSEObjectType.JWT, null}) {
      UnauthenticatedException refused =
          catchThrowableOfType(UnauthenticatedException.class, () -> verifier.verify(token(type)));
      assertThat(refused).as(String.valueOf(type)).isNotNull();
      assertThat(refused.reason()).isEqualTo("TOKEN_MALFORMED");
      assertThat(refused.getMessage()).isEqualTo("the bearer token's typ header must be at+jwt");
    }
  }

  @Test
  void withoutARequiredType_jwtAtJwtAndNone_pass() {
    JwtVerifier verifier = verifier(Optional.empty());
    for (JOSEObjectType type : new JOSEObjectType[] {JOSEObjectType.JWT, new JOSEObjectType("at+jwt"), null}) {
      assertThat(verifier.verify(token(type)).identity()).as(String.valueOf(type)).isEqualTo("alice");
    }
  }
}
