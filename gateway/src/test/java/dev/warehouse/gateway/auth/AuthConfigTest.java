package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JWSAlgorithm;
import dev.warehouse.gateway.GatewayConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AuthConfigTest {

  private static final Map<String, String> JWT = Map.of(
      "AUTH_POLICY_FILE", "/etc/warehouse/policy.yaml",
      "AUTH_JWKS_FILE", "/auth/jwks.json",
      "AUTH_JWT_ISSUER", "https://issuer.test",
      "AUTH_JWT_AUDIENCE", "warehouse-gateway");

  private static Map<String, String> jwtWith(String... pairs) {
    Map<String, String> env = new HashMap<>(JWT);
    for (int i = 0; i < pairs.length; i += 2) {
      if (pairs[i + 1] == null) {
        env.remove(pairs[i]);
      } else {
        env.put(pairs[i], pairs[i + 1]);
      }
    }
    return env;
  }

  @Test
  void authenticationIsOnByDefault_andStartingWithoutItsSettingsFails_sayingHowToTurnItOff() {
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(Map.of())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("AUTH_MODE=jwt needs AUTH_POLICY_FILE")
        .hasMessageContaining("exactly one of AUTH_JWKS_FILE and AUTH_JWKS_URL")
        .hasMessageContaining("AUTH_JWT_ISSUER").hasMessageContaining("AUTH_JWT_AUDIENCE")
        .hasMessageContaining("AUTH_MODE=none");
  }

  @Test
  void jwtMode_withItsSettings_andTheDefaults() {
    AuthConfig auth = GatewayConfig.fromEnvironment(JWT).auth();
    assertThat(auth.mode()).isEqualTo(AuthMode.JWT);
    assertThat(auth.policyFile()).contains(Path.of("/etc/warehouse/policy.yaml"));
    assertThat(auth.algorithms()).containsExactlyInAnyOrder(JWSAlgorithm.RS256, JWSAlgorithm.ES256);
    assertThat(auth.rolesClaim()).isEqualTo("roles");
    assertThat(auth.clockSkew()).isEqualTo(Duration.ofSeconds(60));
    assertThat(auth.jwksRefresh()).isEqualTo(Duration.ofMinutes(5));
    assertThat(GatewayConfig.fromEnvironment(JWT).describe()).contains(" auth_mode=jwt ", " auth_jwks=file:/auth/jwks.json ",
        " auth_jwt_algorithms=ES256,RS256 ");
  }

  @Test
  void everySettingIsSettable() {
    AuthConfig auth = GatewayConfig.fromEnvironment(jwtWith("AUTH_JWKS_FILE", null,
        "AUTH_JWKS_URL", "https://login.example/keys?x=secret", "AUTH_JWT_ALGORITHMS", "ES384, PS256",
        "AUTH_ROLES_CLAIM", "groups", "AUTH_CLOCK_SKEW_SECONDS", "5", "AUTH_JWKS_REFRESH_SECONDS", "30")).auth();
    assertThat(auth.jwksUrl()).contains(URI.create("https://login.example/keys?x=secret"));
    assertThat(auth.algorithms()).containsExactlyInAnyOrder(JWSAlgorithm.ES384, JWSAlgorithm.PS256);
    assertThat(auth.rolesClaim()).isEqualTo("groups");
    assertThat(auth.clockSkew()).isEqualTo(Duration.ofSeconds(5));
    assertThat(auth.jwksRefresh()).isEqualTo(Duration.ofSeconds(30));
    assertThat(auth.describe()).contains("auth_jwks=https://login.example/keys ").doesNotContain("secret");
  }

  @Test
  void none_takesAnExplicitSetting_andNeedsNothingElse() {
    assertThat(GatewayConfig.fromEnvironment(Map.of("AUTH_MODE", "none")).auth().mode()).isEqualTo(AuthMode.NONE);
    // With no authentication, its settings say only that: none of the JWT settings is listed.
    assertThat(GatewayConfig.fromEnvironment(Map.of("AUTH_MODE", "none")).describe()).contains(" auth_mode=none ")
        .doesNotContain("auth_policy_file", "auth_jwks", "auth_jwt_");
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(Map.of("AUTH_MODE", "off")))
        .hasMessageContaining("AUTH_MODE must be jwt or none");
  }

  @Test
  void unsignedAndSharedSecretAlgorithms_andTwoJwksSources_areRefused() {
    for (String algorithms : new String[] {"none", "RS256,none", "HS256"}) {
      assertThatThrownBy(() -> GatewayConfig.fromEnvironment(jwtWith("AUTH_JWT_ALGORITHMS", algorithms)))
          .as(algorithms).hasMessageContaining("AUTH_JWT_ALGORITHMS");
    }
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(jwtWith("AUTH_JWKS_URL", "https://login.example/keys")))
        .hasMessageContaining("exactly one of AUTH_JWKS_FILE and AUTH_JWKS_URL");
  }

  @Test
  void theSettingsAreAmongTheVariablesTheGatewayReads() {
    assertThat(GatewayConfig.variables()).contains("AUTH_MODE", "AUTH_POLICY_FILE", "AUTH_JWKS_FILE", "AUTH_JWKS_URL",
        "AUTH_JWT_ISSUER", "AUTH_JWT_AUDIENCE", "AUTH_JWT_ALGORITHMS", "AUTH_ROLES_CLAIM", "AUTH_CLOCK_SKEW_SECONDS",
        "AUTH_JWKS_REFRESH_SECONDS", "AUTH_JWT_TYPE");
  }

  /** A JWKS over plain http can be swapped on the way; a skew of hours keeps expired tokens working. */
  @Test
  void plainHttpJwksBeyondLoopback_andASkewAboveFiveMinutes_stopTheStart_sayingWhy() {
    String jwksOverUrl = "AUTH_JWKS_FILE";
    for (String url : new String[] {"http://login.example/keys", "http://10.0.0.5:8080/jwks.json", "HTTP://127.0.0.1.evil.test/k"}) {
      assertThatThrownBy(() -> GatewayConfig.fromEnvironment(jwtWith(jwksOverUrl, null, "AUTH_JWKS_URL", url)))
          .as(url).hasMessageContaining("AUTH_JWKS_URL must be an https URL").hasMessageContaining("plain http only on loopback");
    }
    for (String url : new String[] {"https://login.example/keys", "http://127.0.0.1:8080/jwks.json", "http://localhost/k",
        "http://[::1]:9000/k"}) {
      assertThat(GatewayConfig.fromEnvironment(jwtWith(jwksOverUrl, null, "AUTH_JWKS_URL", url)).auth().jwksUrl())
          .as(url).isPresent();
    }

    assertThat(GatewayConfig.fromEnvironment(jwtWith("AUTH_CLOCK_SKEW_SECONDS", "300")).auth().clockSkew())
        .isEqualTo(AuthConfig.MAX_CLOCK_SKEW);
    for (String skew : new String[] {"301", "86400", "4294967296"}) {
      assertThatThrownBy(() -> GatewayConfig.fromEnvironment(jwtWith("AUTH_CLOCK_SKEW_SECONDS", skew)))
          .as(skew).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("AUTH_CLOCK_SKEW_SECONDS must be at most 300 (an expired token is accepted for that long), got " + skew);
    }
  }

  @Test
  void aRequiredTokenType_isReadAndShown_andNoneIsRequiredByDefault() {
    assertThat(GatewayConfig.fromEnvironment(JWT).auth().requiredType()).isEmpty();
    AuthConfig required = GatewayConfig.fromEnvironment(jwtWith("AUTH_JWT_TYPE", "at+jwt")).auth();
    assertThat(required.requiredType()).contains("at+jwt");
    assertThat(required.describe()).contains("auth_jwt_type=at+jwt");
  }
}
