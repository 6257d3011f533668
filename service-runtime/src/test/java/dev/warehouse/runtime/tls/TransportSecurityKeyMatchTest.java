package dev.warehouse.runtime.tls;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.process.CdsTraining;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * A key that is not its certificate's fails the start with a clear message, whether checked where the files are read
 * or, as a process starts, on a second thread and answered before it serves.
 */
class TransportSecurityKeyMatchTest {

  private static final String MISMATCH = "invalid TLS files: TLS_KEY_FILE is not the key of the first certificate in TLS_CERT_FILE";

  @Test
  void anotherCertificatesKey_failsTheLoad_andTheDeferredCheck_whileTheRightKeyLoads() throws Exception {
    try (CdsTraining one = CdsTraining.prepare()) {
      // A key of the same kind (EC P-256), not the certificate's.
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      Path otherKey = one.dir().resolve("other-key.pem");
      Files.writeString(otherKey, "-----BEGIN PRIVATE KEY-----\n"
          + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(generator.generateKeyPair().getPrivate().getEncoded())
          + "\n-----END PRIVATE KEY-----\n");
      Map<String, String> env = one.environment();
      env.put("TLS_KEY_FILE", otherKey.toString());
      TlsConfig mismatched = TlsConfig.fromEnvironment(env);

      assertThatThrownBy(() -> TransportSecurity.load(mismatched))
          .isInstanceOf(IllegalArgumentException.class).hasMessage(MISMATCH);

      ExecutorService second = Executors.newSingleThreadExecutor();
      try {
        // Held until the test lets it go: the load returns without waiting for the check.
        CompletableFuture<Void> gate = new CompletableFuture<>();
        TransportSecurity deferred = TransportSecurity.load(mismatched, task -> second.execute(() -> {
          gate.join();
          task.run();
        }));
        try {
          gate.complete(null);
          assertThatThrownBy(deferred::requireKeyMatch)
              .isInstanceOf(IllegalArgumentException.class).hasMessage(MISMATCH);
        } finally {
          deferred.close();
        }
      } finally {
        second.shutdownNow();
      }

      TlsConfig matching = TlsConfig.fromEnvironment(one.environment());
      assertThatCode(() -> TransportSecurity.load(matching).close()).doesNotThrowAnyException();
      TransportSecurity deferred = TransportSecurity.load(matching, Runnable::run);
      assertThatCode(deferred::requireKeyMatch).doesNotThrowAnyException();
      deferred.close();
    }
  }
}
