package dev.warehouse.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.runtime.tls.TlsMode;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreServiceConfigTest {

  @Test
  void defaults_targetRealAwsOnTheServicePorts() {
    StoreServiceConfig c = StoreServiceConfig.fromEnvironment("inventory-service", 50052, 9092, Map.of());
    assertThat(c.grpcPort()).isEqualTo(50052);
    assertThat(c.metricsPort()).isEqualTo(9092);
    assertThat(c.dynamoEndpoint()).isEmpty();
    assertThat(c.region()).isEqualTo("us-east-1");
    assertThat(c.tableName()).isEqualTo("warehouse");
    assertThat(c.createTable()).isFalse();
    assertThat(c.pageTokenKey()).isEmpty();
    assertThat(c.shutdownDrain()).isEqualTo(Duration.ofMillis(1500));
    assertThat(c.shutdownGrace()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.hotKeyLogShare()).isEqualTo(0.5);
    assertThat(c.grpcBindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.metricsBindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.tls().serverMode()).isEqualTo(TlsMode.PLAINTEXT);
    assertThat(c.auditPushgateway()).isEmpty();
    assertThat(c.describe()).contains("audit_pushgateway=none");
    assertThat(c.describe()).contains("shutdown_drain_ms=1500 shutdown_grace_s=30", "hot_key_log_share=0.5",
        "grpc_bind_address=0.0.0.0 metrics_bind_address=0.0.0.0 grpc_tls_mode=plaintext");
  }

  @Test
  void readsTheTlsSettings_andTheBindAddresses(@TempDir Path dir) throws Exception {
    Path cert = Files.writeString(dir.resolve("c.pem"), "x");
    Path key = Files.writeString(dir.resolve("k.pem"), "x");
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    StoreServiceConfig c = StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of(
        "GRPC_BIND_ADDRESS", "127.0.0.1", "METRICS_BIND_ADDRESS", "[::1]",
        "GRPC_TLS_MODE", "MTLS", "TLS_CERT_FILE", cert.toString(), "TLS_KEY_FILE", key.toString(),
        "TLS_CA_FILE", ca.toString(), "TLS_TRUSTED_PEERS", "spiffe://warehouse.local/gateway, spiffe://x.test/y",
        "TLS_REFRESH_MS", "250"));
    assertThat(c.grpcBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.metricsBindAddress()).isEqualTo("::1");
    assertThat(c.tls().serverMode()).isEqualTo(TlsMode.MTLS);
    assertThat(c.tls().certFile()).contains(cert);
    assertThat(c.tls().keyFile()).contains(key);
    assertThat(c.tls().caFile()).contains(ca);
    assertThat(c.tls().trustedPeers().identities()).containsExactlyInAnyOrder("spiffe://warehouse.local/gateway",
        "spiffe://x.test/y");
    assertThat(c.tls().refresh()).isEqualTo(Duration.ofMillis(250));
    assertThat(c.describe()).contains("grpc_tls_mode=mtls", "tls_trusted_peers=spiffe://warehouse.local/gateway,spiffe://x.test/y");
  }

  /** An empty list of trusted peers would admit any certificate the CA signed: it stops the start instead. */
  @Test
  void trustedPeersNamingNone_stopTheStart(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("f.pem"), "x");
    for (String empty : new String[] {",", " , ,"}) {
      assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("GRPC_TLS_MODE", "mtls",
          "TLS_CERT_FILE", file.toString(), "TLS_KEY_FILE", file.toString(), "TLS_CA_FILE", file.toString(),
          "TLS_TRUSTED_PEERS", empty)))
          .as("'" + empty + "'").isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("TLS_TRUSTED_PEERS is set but names no identity: an empty list would admit any "
              + "certificate the CA signed");
    }
  }

  @Test
  void tlsModes_needTheirFiles_andEveryProblemIsNamed(@TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("GRPC_TLS_MODE", "mtls",
        "TLS_TRUSTED_PEERS", "spiffe://warehouse.local/gateway")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("GRPC_TLS_MODE=mtls needs TLS_CERT_FILE and TLS_KEY_FILE")
        .hasMessageContaining("GRPC_TLS_MODE=mtls needs TLS_CA_FILE");
    Path cert = Files.writeString(dir.resolve("c.pem"), "x");
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("GRPC_TLS_MODE", "tls",
        "TLS_CERT_FILE", cert.toString(), "TLS_TRUSTED_PEERS", "spiffe://warehouse.local/gateway")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("TLS_CERT_FILE and TLS_KEY_FILE go together")
        .hasMessageContaining("TLS_TRUSTED_PEERS applies only with GRPC_TLS_MODE=mtls");
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("GRPC_TLS_MODE", "on",
        "TLS_CA_FILE", dir.resolve("missing.pem").toString(), "TLS_TRUSTED_PEERS", "not a uri",
        "METRICS_BIND_ADDRESS", "127.0.0.1:9092")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("GRPC_TLS_MODE must be one of plaintext, tls, mtls, got 'on'")
        .hasMessageContaining("TLS_CA_FILE must name a readable file")
        .hasMessageContaining("TLS_TRUSTED_PEERS must be URIs")
        .hasMessageContaining("METRICS_BIND_ADDRESS must be an address without a port");
  }

  @Test
  void readsEverySetting() {
    StoreServiceConfig c = StoreServiceConfig.fromEnvironment("s", 1, 2, Map.ofEntries(
        Map.entry("GRPC_PORT", "6000"), Map.entry("METRICS_PORT", "6001"),
        Map.entry("DYNAMODB_ENDPOINT", "http://127.0.0.1:5000"), Map.entry("AWS_REGION", "eu-west-1"),
        Map.entry("TABLE_NAME", "t"), Map.entry("TABLE_AUTO_CREATE", "true"),
        Map.entry("PAGE_TOKEN_KEY", "MDEyMzQ1Njc4OWFiY2RlZg=="), Map.entry("DYNAMODB_CALL_TIMEOUT_MS", "1500"),
        Map.entry("DYNAMODB_IO_THREADS", "3"), Map.entry("SHUTDOWN_DRAIN_MS", "250"),
        Map.entry("SHUTDOWN_GRACE_SECONDS", "7"), Map.entry("HOT_KEY_LOG_SHARE", "0.25")));
    assertThat(c.grpcPort()).isEqualTo(6000);
    assertThat(c.metricsPort()).isEqualTo(6001);
    assertThat(c.dynamoEndpoint()).contains(URI.create("http://127.0.0.1:5000"));
    assertThat(c.region()).isEqualTo("eu-west-1");
    assertThat(c.tableName()).isEqualTo("t");
    assertThat(c.createTable()).isTrue();
    assertThat(c.pageTokenKey()).hasValueSatisfying(k -> assertThat(k).hasSize(16));
    assertThat(c.dynamoCallTimeout().toMillis()).isEqualTo(1500);
    assertThat(c.dynamoIoThreads()).isEqualTo(3);
    assertThat(c.shutdownDrain()).isEqualTo(Duration.ofMillis(250));
    assertThat(c.shutdownGrace().getSeconds()).isEqualTo(7);
    assertThat(c.hotKeyLogShare()).isEqualTo(0.25);
    assertThat(c.describe()).contains("page_token_key=configured", "shutdown_drain_ms=250", "hot_key_log_share=0.25")
        .doesNotContain("MDEy");
  }

  @Test
  void acceptedPageTokenKeys_areCommaSeparatedKeys_needASealingKey_andAreNeverEchoed() {
    String k16 = "MDEyMzQ1Njc4OWFiY2RlZg==";
    String k32 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    StoreServiceConfig c = StoreServiceConfig.fromEnvironment("s", 1, 2,
        Map.of("PAGE_TOKEN_KEY", k32, "PAGE_TOKEN_ACCEPTED_KEYS", k16 + ", " + k32));
    assertThat(c.acceptedPageTokenKeys()).extracting(k -> k.length).containsExactly(16, 32);
    assertThat(c.describe()).contains("page_token_accepted_keys=2").doesNotContain("MDEy");
    assertThat(StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of()).acceptedPageTokenKeys()).isEmpty();
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2,
        Map.of("PAGE_TOKEN_KEY", k32, "PAGE_TOKEN_ACCEPTED_KEYS", k16 + ",c2hvcnQ=")))
        .hasMessageContaining("PAGE_TOKEN_ACCEPTED_KEYS").hasMessageContaining("entry 2").hasMessageNotContaining("c2hvcnQ");
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("PAGE_TOKEN_ACCEPTED_KEYS", k16)))
        .hasMessageContaining("PAGE_TOKEN_ACCEPTED_KEYS needs PAGE_TOKEN_KEY");
  }

  @Test
  void auditPushgateway_isAUrl() {
    StoreServiceConfig c = StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("AUDIT_PUSHGATEWAY_URL", "http://pushgateway:9091"));
    assertThat(c.auditPushgateway()).contains(URI.create("http://pushgateway:9091"));
    assertThat(c.describe()).contains("audit_pushgateway=http://pushgateway:9091");
    assertThat(StoreServiceConfig.variables()).contains("AUDIT_PUSHGATEWAY_URL");
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("AUDIT_PUSHGATEWAY_URL", "pushgateway")))
        .hasMessageContaining("AUDIT_PUSHGATEWAY_URL must be a URL");
  }

  @Test
  void logFormatAndLevel_areRead_andABadOneStopsTheStart() {
    assertThat(StoreServiceConfig.variables()).contains("LOG_FORMAT", "LOG_LEVEL");
    StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("LOG_FORMAT", "text", "LOG_LEVEL", "DEBUG"));
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("LOG_FORMAT", "xml", "LOG_LEVEL", "loud")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("LOG_FORMAT must be one of json, text, got 'xml'")
        .hasMessageContaining("LOG_LEVEL must be one of trace, debug, info, warn, error, got 'loud'");
  }

  @Test
  void hotKeyLogShare_isAboveZeroAndAtMostOne() {
    assertThat(StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("HOT_KEY_LOG_SHARE", "1")).hotKeyLogShare()).isEqualTo(1.0);
    for (String bad : new String[] {"0", "-0.1", "1.5", "half", "NaN"}) {
      assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("HOT_KEY_LOG_SHARE", bad)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("HOT_KEY_LOG_SHARE must be a number above 0 and at most 1, got '" + bad + "'");
    }
  }

  @Test
  void admission_isAdaptiveByDefault_orAFixedLimit_andItsBoundsAreChecked() {
    StoreServiceConfig defaults = StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of());
    assertThat(defaults.admission()).isEqualTo(AdmissionConfig.DEFAULT);
    assertThat(defaults.describe()).contains("admission_limit=adaptive admission_min_limit=4 admission_max_limit=500 "
        + "admission_retry_after_ms=100 admission_max_wait_ms=10000 admission_max_queue=1000 "
        + "grpc_max_concurrent_streams=1000");
    StoreServiceConfig fixed = StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("ADMISSION_LIMIT", "12",
        "ADMISSION_MIN_LIMIT", "2", "ADMISSION_MAX_LIMIT", "40", "ADMISSION_RETRY_AFTER_MS", "250",
        "ADMISSION_MAX_WAIT_MS", "0", "ADMISSION_MAX_QUEUE", "7", "GRPC_MAX_CONCURRENT_STREAMS", "64"));
    assertThat(fixed.admission()).isEqualTo(new AdmissionConfig(Optional.of(12), 2, 40, Duration.ofMillis(250),
        Duration.ZERO, 7, 64));
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("ADMISSION_MAX_WAIT_MS", "-1")))
        .hasMessageContaining("ADMISSION_MAX_WAIT_MS");
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("GRPC_MAX_CONCURRENT_STREAMS", "0")))
        .hasMessageContaining("GRPC_MAX_CONCURRENT_STREAMS");
    for (String bad : new String[] {"0", "-3", "lots", "1.5"}) {
      assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("ADMISSION_LIMIT", bad)))
          .hasMessageContaining("ADMISSION_LIMIT must be 'adaptive' or a whole number of calls of at least 1, got '" + bad + "'");
    }
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("ADMISSION_MIN_LIMIT", "50",
        "ADMISSION_MAX_LIMIT", "10", "ADMISSION_RETRY_AFTER_MS", "0")))
        .hasMessageContaining("ADMISSION_MAX_LIMIT (10) must be at least ADMISSION_MIN_LIMIT (50)")
        .hasMessageContaining("ADMISSION_RETRY_AFTER_MS");
  }

  @Test
  void shutdownDrain_mayBeZero_butNotNegative() {
    assertThat(StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("SHUTDOWN_DRAIN_MS", "0")).shutdownDrain()).isZero();
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of("SHUTDOWN_DRAIN_MS", "-1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("SHUTDOWN_DRAIN_MS must be zero or more, got -1");
  }

  @Test
  void namesEveryMalformedVariable_withoutEchoingTheKey() {
    assertThatThrownBy(() -> StoreServiceConfig.fromEnvironment("s", 1, 2, Map.of(
        "GRPC_PORT", "70000", "METRICS_PORT", "x", "DYNAMODB_ENDPOINT", "nohost",
        "TABLE_AUTO_CREATE", "yes", "PAGE_TOKEN_KEY", "c2hvcnQ=", "DYNAMODB_IO_THREADS", "0")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContainingAll("GRPC_PORT", "METRICS_PORT", "DYNAMODB_ENDPOINT", "TABLE_AUTO_CREATE", "PAGE_TOKEN_KEY",
            "DYNAMODB_IO_THREADS")
        .message().doesNotContain("c2hvcnQ=");
  }
}
