package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.tls.TlsMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GatewayConfigTest {

  /** The settings under test, without authentication (AuthConfigTest has its own). */
  private static Map<String, String> env(String... pairs) {
    Map<String, String> env = new java.util.HashMap<>(Map.of("AUTH_MODE", "none"));
    for (int i = 0; i < pairs.length; i += 2) {
      env.put(pairs[i], pairs[i + 1]);
    }
    return env;
  }

  @Test
  void minForwardBudget_defaultsTo50ms_andIsLogged() {
    GatewayConfig config = GatewayConfig.fromEnvironment(env());

    assertThat(config.minForwardBudget()).isEqualTo(Duration.ofMillis(50)).isEqualTo(GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET);
    assertThat(config.describe()).contains(" min_forward_budget_ms=50 ");
    assertThat(GatewayConfig.variables()).contains("MIN_FORWARD_BUDGET_MS");
  }

  @Test
  void minForwardBudget_isSettable() {
    assertThat(GatewayConfig.fromEnvironment(env("MIN_FORWARD_BUDGET_MS", "20")).minForwardBudget())
        .isEqualTo(Duration.ofMillis(20));
  }

  @Test
  void minForwardBudget_mustBePositive() {
    for (String value : new String[] {"0", "-5", "fifty"}) {
      assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("MIN_FORWARD_BUDGET_MS", value)))
          .as(value).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MIN_FORWARD_BUDGET_MS");
    }
  }

  @Test
  void minForwardBudget_mustBeBelowTheDefaultDeadline_andIsReportedWithTheOtherProblems() {
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("MIN_FORWARD_BUDGET_MS", "500", "DEFAULT_DEADLINE_MS", "500",
        "GRPC_PORT", "70000")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("MIN_FORWARD_BUDGET_MS (500) must be less than DEFAULT_DEADLINE_MS (500)")
        .hasMessageContaining("GRPC_PORT");
    assertThat(GatewayConfig.fromEnvironment(env("MIN_FORWARD_BUDGET_MS", "499", "DEFAULT_DEADLINE_MS", "500"))
        .minForwardBudget()).isEqualTo(Duration.ofMillis(499));
  }

  @Test
  void backendTls_readsItsModeAndEachBackendsOwnTrustedServers_andNeedsTheGatewaysFiles(@TempDir Path dir) throws Exception {
    GatewayConfig plain = GatewayConfig.fromEnvironment(env());
    assertThat(plain.backendTls("inventory-service").mode()).isEqualTo(TlsMode.PLAINTEXT);
    assertThat(plain.tls().serverMode()).isEqualTo(TlsMode.PLAINTEXT);
    assertThat(GatewayConfig.variables()).contains("GRPC_TLS_MODE", "TLS_CERT_FILE", "TLS_KEY_FILE", "TLS_CA_FILE",
        "TLS_TRUSTED_PEERS", "TLS_REFRESH_MS", "BACKEND_TLS_MODE", "INVENTORY_TRUSTED_PEERS", "ORDER_TRUSTED_PEERS",
        "GRPC_BIND_ADDRESS", "METRICS_BIND_ADDRESS").doesNotContain("BACKEND_TRUSTED_PEERS");

    Path cert = Files.writeString(dir.resolve("c.pem"), "x");
    Path key = Files.writeString(dir.resolve("k.pem"), "x");
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    GatewayConfig mtls = GatewayConfig.fromEnvironment(env("BACKEND_TLS_MODE", "mtls",
        "INVENTORY_TRUSTED_PEERS", "spiffe://warehouse.local/inventory-service",
        "ORDER_TRUSTED_PEERS", "spiffe://warehouse.local/order-service",
        "TLS_CERT_FILE", cert.toString(), "TLS_KEY_FILE", key.toString(), "TLS_CA_FILE", ca.toString()));
    assertThat(mtls.backendTls("inventory-service").mode()).isEqualTo(TlsMode.MTLS);
    assertThat(mtls.backendTls("inventory-service").servers().identities())
        .containsExactly("spiffe://warehouse.local/inventory-service");
    assertThat(mtls.backendTls("order-service").servers().identities()).containsExactly("spiffe://warehouse.local/order-service");
    assertThat(mtls.tls().serverMode()).as("the client port stays as it was").isEqualTo(TlsMode.PLAINTEXT);
    assertThat(mtls.describe()).contains("grpc_tls_mode=plaintext", "inventory_tls_mode=mtls",
        "inventory_trusted_peers=spiffe://warehouse.local/inventory-service", "order_tls_mode=mtls",
        "order_trusted_peers=spiffe://warehouse.local/order-service");

    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("BACKEND_TLS_MODE", "mtls")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("BACKEND_TLS_MODE=mtls needs TLS_CA_FILE")
        .hasMessageContaining("BACKEND_TLS_MODE=mtls needs TLS_CERT_FILE and TLS_KEY_FILE");
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("ORDER_TRUSTED_PEERS", "spiffe://warehouse.local/x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ORDER_TRUSTED_PEERS applies only with BACKEND_TLS_MODE=tls or mtls");
  }

  /** Settings that would quietly admit more than meant stop the start, each saying why. */
  @Test
  void unsafeSettings_stopTheStart_sayingWhy() {
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("BACKEND_TLS_MODE", "tls", "INVENTORY_TRUSTED_PEERS", ",")))
        .hasMessageContaining("INVENTORY_TRUSTED_PEERS is set but names no identity: an empty list would admit any "
            + "certificate the CA signed");
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("TLS_TRUSTED_PEERS", " , ")))
        .hasMessageContaining("TLS_TRUSTED_PEERS is set but names no identity");
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("BACKEND_TRUSTED_PEERS", "spiffe://warehouse.local/x")))
        .hasMessageContaining("BACKEND_TRUSTED_PEERS is replaced by INVENTORY_TRUSTED_PEERS and ORDER_TRUSTED_PEERS");
  }

  @Test
  void backendAddresses_takeFixedListsAndDnsTargets_lookedUpEvery10sByDefault() {
    GatewayConfig fixed = GatewayConfig.fromEnvironment(env());
    assertThat(fixed.inventoryAddresses()).containsExactly("127.0.0.1:50052");
    assertThat(fixed.resolvePeriod()).isEqualTo(Duration.ofSeconds(10)).isEqualTo(GatewayConfig.DEFAULT_RESOLVE_PERIOD);

    GatewayConfig dns = GatewayConfig.fromEnvironment(env(
        "INVENTORY_ADDRESSES", "dns:///inventory-service-headless:50052",
        "ORDER_ADDRESSES", " dns:///order-service-headless:50053 , 10.0.0.9:50053",
        "BACKEND_RESOLVE_SECONDS", "5"));
    assertThat(dns.inventoryAddresses()).containsExactly("dns:///inventory-service-headless:50052");
    assertThat(dns.orderAddresses()).containsExactly("dns:///order-service-headless:50053", "10.0.0.9:50053");
    assertThat(dns.resolvePeriod()).isEqualTo(Duration.ofSeconds(5));
    assertThat(dns.describe()).contains(" inventory_addresses=dns:///inventory-service-headless:50052 ",
        " backend_resolve_s=5 ");
    assertThat(GatewayConfig.variables()).contains("INVENTORY_ADDRESSES", "ORDER_ADDRESSES", "BACKEND_RESOLVE_SECONDS");
  }

  @Test
  void malformedBackendAddresses_andResolvePeriod_failAtStartUp_namingEachVariableAndEntry() {
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env(
        "INVENTORY_ADDRESSES", "dns:///inventory-service-headless",
        "ORDER_ADDRESSES", "order-service:50053,dns://10.0.0.2/order-service-headless:50053",
        "BACKEND_RESOLVE_SECONDS", "0")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("INVENTORY_ADDRESSES must be host:port or dns:///name:port, separated by commas: "
            + "'dns:///inventory-service-headless' has no port (dns:///name:port)")
        .hasMessageContaining("ORDER_ADDRESSES must be host:port or dns:///name:port, separated by commas: "
            + "'dns://10.0.0.2/order-service-headless:50053' must be dns:///name:port")
        .hasMessageContaining("BACKEND_RESOLVE_SECONDS must be positive, got 0");
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("ORDER_ADDRESSES", "order-service:50053,")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ORDER_ADDRESSES").hasMessageContaining(
            "an empty address");
  }
}
