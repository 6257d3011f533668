package dev.warehouse.gateway.tls;

import dev.warehouse.devkit.LocalCa;
import dev.warehouse.runtime.tls.ChannelTlsConfig;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TrustedPeers;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Certificates for TLS tests, issued by the project's own local CA into a test's directory. */
final class TestCertificates {

  /** Short, so a rotation test sees a new certificate within a moment. */
  static final Duration REFRESH = Duration.ofMillis(100);

  final Path dir;
  final LocalCa ca;
  private final String caName;

  /** A new CA, written as {@code <caName>-ca.pem} in {@code dir}. */
  TestCertificates(Path dir, String caName) throws Exception {
    this.dir = dir;
    this.caName = caName;
    Instant now = Instant.now();
    this.ca = LocalCa.create(caName, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));
    ca.write(caFile(), dir.resolve(caName + "-ca-key.pem"));
  }

  Path caFile() {
    return dir.resolve(caName + "-ca.pem");
  }

  Path certFile(String name) {
    return dir.resolve(name + ".pem");
  }

  Path keyFile(String name) {
    return dir.resolve(name + "-key.pem");
  }

  /** Issues {@code workload}'s certificate, valid now, under the file name {@code name}. */
  LocalCa.Issued issue(String name, String workload) throws Exception {
    Instant now = Instant.now();
    return issue(name, workload, now.minus(Duration.ofMinutes(5)), now.plus(Duration.ofDays(1)));
  }

  LocalCa.Issued issue(String name, String workload, Instant notBefore, Instant notAfter) throws Exception {
    LocalCa.Issued issued = ca.issue(workload, true, List.of("localhost"), List.of("127.0.0.1"), notBefore, notAfter);
    issued.write(certFile(name), keyFile(name));
    return issued;
  }

  /** The settings of a process presenting {@code name}'s certificate and trusting {@code trustedCa}. */
  TlsConfig config(TlsMode serverMode, String name, Path trustedCa, List<String> trustedPeers) {
    return new TlsConfig(serverMode, Optional.of(certFile(name)), Optional.of(keyFile(name)), Optional.of(trustedCa),
        TrustedPeers.of(trustedPeers), REFRESH);
  }

  static ChannelTlsConfig channel(TlsMode mode, String... trustedServers) {
    return new ChannelTlsConfig(mode, TrustedPeers.of(List.of(trustedServers)));
  }
}
