package dev.warehouse.devkit;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code java -jar dev-kit.jar certs DIR [--renew] [--per-workload OUT]}: makes sure {@code DIR} holds a local
 * CA and a certificate for each workload ({@link #WORKLOADS}), as {@code ./run.sh} and docker compose use them:
 * {@code ca.pem} (the bundle every process trusts), {@code ca-key.pem}, and {@code NAME.pem} /
 * {@code NAME-key.pem} per workload. With {@code --per-workload OUT}, each workload's own pair and
 * {@code ca.pem} are also copied into {@code OUT/NAME/}, so that a container can be given its own key and
 * nobody else's (docker compose mounts one such directory per container; the CA's key stays in {@code DIR}). Idempotent: it keeps what is there and still good, and issues a
 * certificate that is missing, unreadable, from another CA or within {@link #RENEW_BEFORE} of expiring.
 * {@code --renew} issues every workload certificate again (a rotation: running processes pick the new
 * files up within their {@code TLS_REFRESH_MS}).
 */
public final class CertsCommand {

  /** One certificate to issue: its name (file and SPIFFE ID), whether it serves, and its host names. */
  public record Workload(String name, boolean server, List<String> dnsNames) {}

  /** The three processes (each serves and calls), and a client for grpcurl against a TLS gateway. */
  public static final List<Workload> WORKLOADS = List.of(
      new Workload("gateway", true, List.of("localhost", "gateway")),
      new Workload("inventory-service", true, List.of("localhost", "inventory-service")),
      new Workload("order-service", true, List.of("localhost", "order-service")),
      new Workload("client", false, List.of()));

  public static final Duration CA_VALIDITY = Duration.ofDays(3650);
  public static final Duration LEAF_VALIDITY = Duration.ofDays(30);
  public static final Duration RENEW_BEFORE = Duration.ofDays(10);
  /** Certificates start a little in the past, so a peer whose clock is slightly behind accepts them. */
  private static final Duration BACKDATE = Duration.ofMinutes(5);
  private static final List<String> LOOPBACK_IPS = List.of("127.0.0.1", "::1");

  private CertsCommand() {}

  /** Returns the exit status: 0 done, 1 failed, 2 bad arguments. */
  public static int run(String[] args, PrintStream out) {
    Path dir = null;
    Path perWorkload = null;
    boolean renew = false;
    boolean bad = false;
    for (int i = 0; i < args.length && !bad; i++) {
      if (args[i].equals("--renew")) {
        renew = true;
      } else if (args[i].equals("--per-workload") && i + 1 < args.length && perWorkload == null) {
        perWorkload = Path.of(args[++i]);
      } else if (!args[i].startsWith("-") && dir == null) {
        dir = Path.of(args[i]);
      } else {
        bad = true;
      }
    }
    if (dir == null || bad) {
      out.println("usage: certs DIR [--renew] [--per-workload OUT]");
      return 2;
    }
    try {
      out.println(ensure(dir, renew, Instant.now()));
      if (perWorkload != null) {
        out.println(copyPerWorkload(dir, perWorkload));
      }
      return 0;
    } catch (IOException | GeneralSecurityException e) {
      out.println("certs: failed: " + e.getMessage());
      return 1;
    }
  }

  /** Does the work of {@link #run}; returns its one-line summary. */
  public static String ensure(Path dir, boolean renew, Instant now) throws IOException, GeneralSecurityException {
    Files.createDirectories(dir);
    Path caCert = dir.resolve("ca.pem");
    Path caKey = dir.resolve("ca-key.pem");
    LocalCa ca;
    boolean newCa = !Files.isRegularFile(caCert) || !Files.isRegularFile(caKey);
    if (newCa) {
      ca = LocalCa.create("warehouse local CA", now.minus(BACKDATE), now.plus(CA_VALIDITY));
      ca.write(caCert, caKey);
    } else {
      ca = LocalCa.read(caCert, caKey);
    }
    List<String> issued = new ArrayList<>();
    List<String> kept = new ArrayList<>();
    for (Workload workload : WORKLOADS) {
      Path cert = dir.resolve(workload.name() + ".pem");
      Path key = dir.resolve(workload.name() + "-key.pem");
      if (!renew && Files.isRegularFile(key) && stillGood(ca, cert, now)) {
        kept.add(workload.name());
        continue;
      }
      ca.issue(workload.name(), workload.server(), workload.dnsNames(), workload.server() ? LOOPBACK_IPS : List.of(),
          now.minus(BACKDATE), now.plus(LEAF_VALIDITY)).write(cert, key);
      issued.add(workload.name());
    }
    return "certs: dir=" + dir + " ca=" + (newCa ? "created" : "kept")
        + " issued=" + (issued.isEmpty() ? "none" : String.join(",", issued))
        + " kept=" + (kept.isEmpty() ? "none" : String.join(",", kept));
  }

  /** Copies each workload's certificate, key and the CA bundle into {@code out/NAME/}; returns a summary. */
  public static String copyPerWorkload(Path dir, Path out) throws IOException {
    for (Workload workload : WORKLOADS) {
      Path own = out.resolve(workload.name());
      for (String file : List.of("ca.pem", workload.name() + ".pem", workload.name() + "-key.pem")) {
        AtomicFiles.write(own.resolve(file), Files.readAllBytes(dir.resolve(file)), file.endsWith("-key.pem"));
      }
    }
    return "certs: per-workload=" + out + " workloads="
        + String.join(",", WORKLOADS.stream().map(Workload::name).toList());
  }

  private static boolean stillGood(LocalCa ca, Path cert, Instant now) {
    try {
      X509Certificate certificate = io.grpc.util.CertificateUtils.getX509Certificates(
          new ByteArrayInputStream(Files.readAllBytes(cert)))[0];
      return ca.signed(certificate) && certificate.getNotAfter().toInstant().isAfter(now.plus(RENEW_BEFORE));
    } catch (IOException | GeneralSecurityException | ArrayIndexOutOfBoundsException unreadable) {
      return false;
    }
  }
}
