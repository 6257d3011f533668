package dev.warehouse.runtime.tls;

import dev.warehouse.runtime.env.EnvReader;
import dev.warehouse.runtime.log.Fields;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The TLS settings of one process, read once by {@code main}: the files of its own identity and of
 * the CA it trusts (one set, which its server and, in the gateway, its backend channels share), how
 * its gRPC port is served, and whom that port lets call.
 *
 * @param serverMode   {@code GRPC_TLS_MODE}: {@code plaintext} (default), {@code tls} or {@code mtls}
 * @param certFile     {@code TLS_CERT_FILE}: PEM certificate chain this process presents, its own certificate first
 * @param keyFile      {@code TLS_KEY_FILE}: the PEM (PKCS #8) private key of that certificate
 * @param caFile       {@code TLS_CA_FILE}: PEM bundle of the CAs whose certificates this process accepts from peers
 * @param trustedPeers {@code TLS_TRUSTED_PEERS}: with {@code mtls}, the identities (certificate URI SANs) that may
 *                     call this port; empty means any certificate the CA signed. Health is open to every one.
 * @param refresh      {@code TLS_REFRESH_MS}: how often the three files are checked for a change (rotation)
 * @param servicePeers with {@code mtls}, services (by full name) whose callers are other identities than
 *                     {@code trustedPeers}' (the inventory-service's {@code RESERVATION_TRUSTED_PEERS}): for
 *                     their calls these replace {@code trustedPeers}
 */
public record TlsConfig(
    TlsMode serverMode,
    Optional<Path> certFile,
    Optional<Path> keyFile,
    Optional<Path> caFile,
    TrustedPeers trustedPeers,
    Duration refresh,
    Map<String, TrustedPeers> servicePeers) {

  public TlsConfig {
    servicePeers = Map.copyOf(servicePeers);
  }

  /** Whom the whole port admits, with no service of its own callers. */
  public TlsConfig(TlsMode serverMode, Optional<Path> certFile, Optional<Path> keyFile, Optional<Path> caFile,
      TrustedPeers trustedPeers, Duration refresh) {
    this(serverMode, certFile, keyFile, caFile, trustedPeers, refresh, Map.of());
  }

  /** The same settings, where {@code service}'s calls admit only {@code peers}. */
  public TlsConfig withServicePeers(String service, TrustedPeers peers) {
    java.util.Map<String, TrustedPeers> all = new java.util.HashMap<>(servicePeers);
    all.put(service, peers);
    return new TlsConfig(serverMode, certFile, keyFile, caFile, trustedPeers, refresh, all);
  }

  /** grpc-java's own file watchers refresh at most once a minute; certificates live for days. */
  public static final Duration DEFAULT_REFRESH = Duration.ofMinutes(1);

  public static final TlsConfig PLAINTEXT = new TlsConfig(TlsMode.PLAINTEXT, Optional.empty(), Optional.empty(),
      Optional.empty(), TrustedPeers.ANY_FROM_CA, DEFAULT_REFRESH);

  /** Only the TLS settings, for a tool that talks to its own process (the container health probe). */
  public static TlsConfig fromEnvironment(Map<String, String> env) {
    EnvReader reader = new EnvReader(env);
    TlsConfig config = read(reader);
    reader.throwIfProblems();
    return config;
  }

  /** Reads the settings, reporting every inconsistency (a mode without the files it needs) to {@code reader}. */
  public static TlsConfig read(EnvReader reader) {
    TlsMode mode = TlsMode.of(reader.choice("GRPC_TLS_MODE", TlsMode.PLAINTEXT.text(), TlsMode.NAMES));
    Optional<Path> cert = reader.readableFile("TLS_CERT_FILE");
    Optional<Path> key = reader.readableFile("TLS_KEY_FILE");
    Optional<Path> ca = reader.readableFile("TLS_CA_FILE");
    TrustedPeers trusted = TrustedPeers.of(reader.identities("TLS_TRUSTED_PEERS"));
    Duration refresh = Duration.ofMillis(reader.positiveLong("TLS_REFRESH_MS", DEFAULT_REFRESH.toMillis()));
    if (cert.isPresent() != key.isPresent()) {
      reader.problem("TLS_CERT_FILE and TLS_KEY_FILE go together: set both or neither");
    }
    if (mode != TlsMode.PLAINTEXT && cert.isEmpty()) {
      reader.problem("GRPC_TLS_MODE=" + mode.text() + " needs TLS_CERT_FILE and TLS_KEY_FILE");
    }
    if (mode == TlsMode.MTLS && ca.isEmpty()) {
      reader.problem("GRPC_TLS_MODE=mtls needs TLS_CA_FILE to verify the callers' certificates");
    }
    if (!trusted.anyFromCa() && mode != TlsMode.MTLS) {
      reader.problem("TLS_TRUSTED_PEERS applies only with GRPC_TLS_MODE=mtls");
    }
    return new TlsConfig(mode, cert, key, ca, trusted, refresh);
  }

  /** Fields of the start-up log line (paths, no key material). */
  public Fields fields() {
    Fields fields = new Fields().add("grpc_tls_mode", serverMode.text())
        .add("tls_cert_file", certFile.map(Path::toString).orElse("none"))
        .add("tls_key_file", keyFile.map(Path::toString).orElse("none"))
        .add("tls_ca_file", caFile.map(Path::toString).orElse("none"))
        .add("tls_trusted_peers", serverMode == TlsMode.MTLS ? trustedPeers.describe() : "n/a");
    servicePeers.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> fields.add(
        "tls_trusted_peers[" + e.getKey() + "]", serverMode == TlsMode.MTLS ? e.getValue().describe() : "n/a"));
    return fields.add("tls_refresh_ms", refresh.toMillis());
  }

  /** {@link #fields} as {@code key=value key=value}. */
  public String describe() {
    return fields().toString();
  }
}
