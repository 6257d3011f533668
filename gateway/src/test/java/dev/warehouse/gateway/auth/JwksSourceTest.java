package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.sun.net.httpserver.HttpServer;
import dev.warehouse.testing.LogRecords;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JWKS is read at start and again every refresh period, from a file or a URL; a bad read keeps the keys held. */
@Tag("integration")
class JwksSourceTest {

  private static final Duration REFRESH = Duration.ofMillis(100);

  @TempDir
  Path dir;

  private static void awaitKeyIds(Supplier<List<String>> keyIds, String... expected) {
    Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
        .untilAsserted(() -> assertThat(keyIds.get()).containsExactly(expected));
  }

  /** Waits for a {@code jwks_refresh_failed} event whose error says {@code error}, and that kept {@code keptKeyIds}. */
  private static void awaitRefreshFailed(LogRecords log, String error, String keptKeyIds) {
    Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
        .untilAsserted(() -> assertThat(log.events()).anySatisfy(event -> {
          assertThat(event.event()).isEqualTo("jwks_refresh_failed");
          assertThat(event.field("error")).asString().contains(error);
          assertThat(event.field("kept_key_ids")).isEqualTo(keptKeyIds);
        }));
  }

  @Test
  void aFile_isReadAgain_andABadReadKeepsTheKeys() throws Exception {
    Path file = dir.resolve("jwks.json");
    TestTokens.writeJwks(file, TestTokens.rsaKey("k1"));
    try (JwksSource source = JwksSource.ofFile(file, REFRESH); LogRecords log = new LogRecords(JwksSource.class)) {
      assertThat(source.keyIds()).containsExactly("k1");
      TestTokens.writeJwks(file, TestTokens.rsaKey("k2"), TestTokens.ecKey("k3"));
      awaitKeyIds(source::keyIds, "k2", "k3");

      // A bad read logs its failure: the keys are checked once the timer's refresh has failed, not after a guess.
      Files.writeString(file, "{not json");
      awaitRefreshFailed(log, "ParseException", "k2,k3");
      assertThat(source.keyIds()).containsExactly("k2", "k3");
      Files.writeString(file, "{\"keys\":[]}");
      awaitRefreshFailed(log, "no public key in it", "k2,k3");
      assertThat(source.keyIds()).containsExactly("k2", "k3");
    }
  }

  @Test
  void privateKeyMaterial_inTheFile_isNeverKept() throws Exception {
    Path file = dir.resolve("jwks.json");
    RSAKey key = TestTokens.rsaKey("k1");
    Files.writeString(file, new JWKSet(key).toString(false)); // the private half too, by mistake
    try (JwksSource source = JwksSource.ofFile(file, REFRESH)) {
      assertThat(source.get(new com.nimbusds.jose.jwk.JWKSelector(new com.nimbusds.jose.jwk.JWKMatcher.Builder().build()),
          null)).singleElement().matches(jwk -> !jwk.isPrivate());
    }
  }

  @Test
  void aMissingOrEmptyJwks_failsAtStart() throws IOException {
    assertThatThrownBy(() -> JwksSource.ofFile(dir.resolve("absent.json"), REFRESH)).isInstanceOf(IOException.class)
        .hasMessageContaining("absent.json");
    Path empty = dir.resolve("empty.json");
    Files.writeString(empty, "{\"keys\":[]}");
    assertThatThrownBy(() -> JwksSource.ofFile(empty, REFRESH)).hasMessageContaining("no public key");
  }

  @Test
  void aUrl_isFetchedAgain() throws Exception {
    AtomicReference<String> served = new AtomicReference<>(new JWKSet(TestTokens.ecKey("u1")).toPublicJWKSet().toString());
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    http.createContext("/jwks.json", exchange -> {
      byte[] body = served.get().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    http.start();
    try (JwksSource source = JwksSource.ofUrl(
        URI.create("http://127.0.0.1:" + http.getAddress().getPort() + "/jwks.json"), REFRESH)) {
      assertThat(source.keyIds()).containsExactly("u1");
      served.set(new JWKSet(TestTokens.ecKey("u2")).toPublicJWKSet().toString());
      awaitKeyIds(source::keyIds, "u2");
    } finally {
      http.stop(0);
    }
  }
}
