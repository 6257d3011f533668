package dev.warehouse.devkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.tls.PeerIdentity;
import io.grpc.util.CertificateUtils;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code dev-kit.jar certs DIR}: what run.sh and compose's one-shot make on first start, and keep after. */
class CertsCommandTest {

  private static final List<String> NAMES = List.of("gateway", "inventory-service", "order-service", "client");

  @TempDir
  Path dir;

  @Test
  void firstRun_makesACaAndOneCertificatePerWorkload_withItsSpiffeIdentity_andPrivateKeys() throws Exception {
    String summary = run(dir.toString());

    assertThat(summary).contains("ca=created", "issued=gateway,inventory-service,order-service,client", "kept=none");
    X509Certificate ca = certificate(dir.resolve("ca.pem"));
    for (String name : NAMES) {
      X509Certificate leaf = certificate(dir.resolve(name + ".pem"));
      leaf.verify(ca.getPublicKey());
      assertThat(PeerIdentity.of(leaf)).map(PeerIdentity::uri).contains(LocalCa.spiffeId(name));
      assertThat(leaf.getNotAfter().toInstant()).isAfter(Instant.now().plus(CertsCommand.LEAF_VALIDITY).minusSeconds(60));
      try (InputStream key = Files.newInputStream(dir.resolve(name + "-key.pem"))) {
        assertThat(CertificateUtils.getPrivateKey(key).getAlgorithm()).isEqualTo("EC"); // PKCS #8, as grpc-java reads
      }
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(name + "-key.pem"))))
          .isEqualTo("rw-------");
    }
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca-key.pem"))))
        .isEqualTo("rw-------");
    assertThat(certificate(dir.resolve("gateway.pem")).getExtendedKeyUsage())
        .containsExactly("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"); // serverAuth, clientAuth
    assertThat(certificate(dir.resolve("client.pem")).getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
  }

  @Test
  void laterRuns_keepWhatIsStillGood_reissueWhatExpiresSoon_andRenewReissuesEveryCertificate() throws Exception {
    CertsCommand.ensure(dir, false, Instant.now());
    BigInteger gatewaySerial = certificate(dir.resolve("gateway.pem")).getSerialNumber();
    BigInteger caSerial = certificate(dir.resolve("ca.pem")).getSerialNumber();

    assertThat(CertsCommand.ensure(dir, false, Instant.now())).contains("ca=kept", "issued=none",
        "kept=gateway,inventory-service,order-service,client");
    assertThat(certificate(dir.resolve("gateway.pem")).getSerialNumber()).isEqualTo(gatewaySerial);

    Files.delete(dir.resolve("client-key.pem"));
    Instant nearExpiry = Instant.now().plus(CertsCommand.LEAF_VALIDITY).minus(CertsCommand.RENEW_BEFORE)
        .plus(Duration.ofHours(1));
    assertThat(CertsCommand.ensure(dir, false, nearExpiry))
        .contains("ca=kept", "issued=gateway,inventory-service,order-service,client");

    BigInteger before = certificate(dir.resolve("gateway.pem")).getSerialNumber();
    assertThat(run(dir.toString(), "--renew")).contains("ca=kept", "issued=gateway,inventory-service,order-service,client");
    assertThat(certificate(dir.resolve("gateway.pem")).getSerialNumber()).isNotEqualTo(before);
    assertThat(certificate(dir.resolve("ca.pem")).getSerialNumber()).isEqualTo(caSerial);
  }

  @Test
  void perWorkload_givesEachWorkloadItsOwnKeyAndTheCaCertificate_andNothingElse() throws Exception {
    Path out = dir.resolve("out");
    assertThat(run(dir.resolve("ca").toString(), "--per-workload", out.toString()))
        .contains("per-workload=" + out, "workloads=gateway,inventory-service,order-service,client");

    for (String name : NAMES) {
      try (var files = Files.list(out.resolve(name))) {
        assertThat(files.map(file -> file.getFileName().toString()))
            .containsExactlyInAnyOrder("ca.pem", name + ".pem", name + "-key.pem");
      }
      assertThat(out.resolve(name).resolve(name + "-key.pem")).hasSameBinaryContentAs(dir.resolve("ca").resolve(name + "-key.pem"));
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(out.resolve(name).resolve(name + "-key.pem"))))
          .isEqualTo("rw-------");
      assertThat(out.resolve(name).resolve("ca.pem")).hasSameBinaryContentAs(dir.resolve("ca").resolve("ca.pem"));
    }
  }

  @Test
  void withoutADirectory_printsItsUsage() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThat(CertsCommand.run(new String[] {"--renew"}, new PrintStream(out, true, StandardCharsets.UTF_8))).isEqualTo(2);
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("usage: certs DIR [--renew] [--per-workload OUT]");
  }

  private static String run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status = CertsCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8));
    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(status).as(printed).isZero();
    return printed;
  }

  private static X509Certificate certificate(Path file) throws Exception {
    try (InputStream in = Files.newInputStream(file)) {
      X509Certificate[] certificates = CertificateUtils.getX509Certificates(in);
      assertThat(certificates).hasSize(1);
      return certificates[0];
    }
  }
}
