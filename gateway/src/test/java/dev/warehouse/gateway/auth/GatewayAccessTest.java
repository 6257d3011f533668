package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.gateway.GatewayProcess;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.testing.LogRecords;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the gateway does at start with its access settings: a warning when off, a refusal when they cannot hold. */
class GatewayAccessTest {

  @TempDir
  Path dir;

  private static GatewayAccess start(AuthConfig config) throws IOException {
    return GatewayAccess.start(config, Clock.systemUTC(), GatewayProcess.servedServices(),
        List.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")),
        new SimpleMeterRegistry());
  }

  private AuthConfig jwt(Path policy, Path jwks) {
    return new AuthConfig(AuthMode.JWT, Optional.of(policy), Optional.of(jwks), Optional.empty(), TestTokens.ISSUER,
        TestTokens.AUDIENCE, AuthConfig.ACCEPTABLE_ALGORITHMS, "roles", AuthConfig.DEFAULT_CLOCK_SKEW,
        AuthConfig.DEFAULT_JWKS_REFRESH, AuthConfig.DEFAULT_TOKEN_CACHE_SIZE);
  }

  @Test
  void authenticationOff_isAWarningAtStart() throws IOException {
    try (LogRecords log = new LogRecords(GatewayAccess.class); GatewayAccess ignored = start(AuthConfig.NONE)) {
      assertThat(log.events()).anySatisfy(event -> {
        assertThat(event.level()).isEqualTo("WARN");
        assertThat(event.fields()).containsEntry("event", "auth_disabled").containsEntry("auth_mode", "none");
      });
    }
  }

  @Test
  void aPolicyNamingAnUnservedMethod_stopsTheStart() throws IOException {
    Path jwks = dir.resolve("jwks.json");
    TestTokens.writeJwks(jwks, TestTokens.ecKey("k1"));
    Path typo = dir.resolve("policy.yaml");
    Files.writeString(typo, "roles:\n  picker: [warehouse.inventory.v1.InventoryService/AdjustStok]\n");
    assertThatThrownBy(() -> start(jwt(typo, jwks))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("picker: warehouse.inventory.v1.InventoryService/AdjustStok");
  }

  @Test
  void anUnreadableJwks_stopsTheStart() {
    assertThatThrownBy(() -> start(jwt(GatewayAuthTest.DEV_POLICY, dir.resolve("absent.json"))))
        .isInstanceOf(IOException.class).hasMessageContaining("absent.json");
  }
}
