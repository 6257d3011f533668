package dev.warehouse.runtime.tls;

import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.log.Fields;
import dev.warehouse.runtime.threads.DaemonThreads;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager.SslSocketAndEnginePeerVerifier;
import io.grpc.util.AdvancedTlsX509TrustManager.Verification;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.grpc.util.CertificateUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one process presents and trusts on its gRPC connections, built once from its {@link TlsConfig}:
 * the credentials of its server ({@link #serverBuilder}) and of its client channels
 * ({@link #channelCredentials}), all sharing one identity and one CA bundle.
 *
 * <p>Rotation without restart: the key and trust managers are grpc-java's
 * {@link AdvancedTlsX509KeyManager} and {@link AdvancedTlsX509TrustManager}, which every new handshake
 * asks for their current material; {@link #watchFiles} re-reads the files every refresh period and swaps
 * in what changed (connections already open keep theirs). The managers' own file watchers
 * ({@code updateIdentityCredentials(File, File, period, unit, executor)}) are not used because they
 * refresh at most once a minute, and reload an identity only when both files' modification times
 * changed, so a renewal that rewrites only the certificate would never be served. This one compares
 * contents, swaps a key in only with its own certificate (a half-written rotation keeps the previous
 * pair), and logs what it loaded.
 */
public final class TransportSecurity implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TransportSecurity.class);

  private final TlsConfig config;
  private final AdvancedTlsX509KeyManager identity; // null without a certificate
  private final AdvancedTlsX509TrustManager callerVerifier; // null without a CA
  private final List<AdvancedTlsX509TrustManager> trustManagers = new CopyOnWriteArrayList<>();
  private volatile X509Certificate[] roots; // null without a CA
  private volatile X509Certificate certificate; // null without a certificate
  // Read and written on the watcher thread only, once construction is over.
  private byte[] identityDigest;
  private byte[] caDigest;
  private ScheduledExecutorService watcher;
  // Whether the key is the certificate's: completed by the executor load was given (the start's second threads).
  private final CompletableFuture<Void> keyMatch;

  private record Identity(X509Certificate[] chain, PrivateKey key) {}

  private TransportSecurity(TlsConfig config, Executor keyCheck) throws IOException, GeneralSecurityException {
    this.config = config;
    if (config.certFile().isPresent()) {
      byte[] cert = Files.readAllBytes(config.certFile().get());
      byte[] key = Files.readAllBytes(config.keyFile().orElseThrow());
      Identity loaded = parseIdentity(cert, key);
      keyMatch = CompletableFuture.runAsync(() -> {
        try {
          requireMatch(loaded.key(), loaded.chain()[0]);
        } catch (GeneralSecurityException e) {
          throw new CompletionException(e);
        }
      }, keyCheck);
      identity = new AdvancedTlsX509KeyManager();
      identity.updateIdentityCredentials(loaded.chain(), loaded.key());
      certificate = loaded.chain()[0];
      identityDigest = digest(cert, key);
      logIdentity("tls_identity_loaded", certificate);
    } else {
      identity = null;
      keyMatch = CompletableFuture.completedFuture(null);
    }
    if (config.caFile().isPresent()) {
      byte[] ca = Files.readAllBytes(config.caFile().get());
      roots = parseRoots(ca);
      caDigest = digest(ca);
      callerVerifier = trustManager(null);
      Events.info(log, "tls_ca_loaded").addKeyValue("certificates", roots.length).log();
    } else {
      callerVerifier = null;
    }
  }

  /**
   * Reads the configured files once.
   *
   * @throws IOException              when a file cannot be read
   * @throws IllegalArgumentException naming what is wrong with their contents (no certificate, a key that is
   *                                  not PKCS #8 PEM or not the certificate's), like any invalid configuration
   */
  public static TransportSecurity load(TlsConfig config) throws IOException {
    TransportSecurity loaded = load(config, Runnable::run);
    loaded.requireKeyMatch();
    return loaded;
  }

  /**
   * The same, except that whether the key is the certificate's is checked on {@code keyCheck}, and answered by
   * {@link #requireKeyMatch}: an ECDSA signature and its verification, a tenth of a second of a cold start that the
   * start's second threads can spend while its main one builds the server (docs/performance-log.md).
   */
  public static TransportSecurity load(TlsConfig config, Executor keyCheck) throws IOException {
    try {
      return new TransportSecurity(config, keyCheck);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("invalid TLS files: " + e.getMessage(), e);
    }
  }

  /**
   * Waits for the check that the key is the certificate's; call before serving.
   *
   * @throws IllegalArgumentException when it is not, as {@link #load(TlsConfig)} throws
   */
  public void requireKeyMatch() {
    try {
      keyMatch.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof GeneralSecurityException) {
        throw new IllegalArgumentException("invalid TLS files: " + cause.getMessage(), cause);
      }
      throw e;
    }
  }

  /** Re-reads the files every refresh period from now on, on a thread of its own; {@link #close} stops it. */
  public synchronized TransportSecurity watchFiles() {
    if (watcher == null && (identity != null || roots != null)) {
      watcher = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("tls-files"));
      long period = config.refresh().toMillis();
      watcher.scheduleWithFixedDelay(this::reloadChanged, period, period, TimeUnit.MILLISECONDS);
    }
    return this;
  }

  public TlsConfig config() {
    return config;
  }

  /** The certificate this process presents now, if it has one. */
  public Optional<X509Certificate> certificate() {
    return Optional.ofNullable(certificate);
  }

  /**
   * A Netty server builder on {@code address} that serves as {@code GRPC_TLS_MODE} says and, with a CA,
   * puts each caller's identity into its calls' context (admitting only trusted identities with {@code mtls}).
   */
  public NettyServerBuilder serverBuilder(InetSocketAddress address) {
    NettyServerBuilder builder = NettyServerBuilder.forAddress(address, serverCredentials());
    serverInterceptor().ifPresent(builder::intercept);
    return builder;
  }

  ServerCredentials serverCredentials() {
    return switch (config.serverMode()) {
      case PLAINTEXT -> InsecureServerCredentials.create();
      case TLS -> callerVerifier == null
          ? TlsServerCredentials.newBuilder().keyManager(identity).build()
          // A client certificate is verified when offered, so a caller's identity can come from it.
          : TlsServerCredentials.newBuilder().keyManager(identity).trustManager(callerVerifier)
              .clientAuth(TlsServerCredentials.ClientAuth.OPTIONAL).build();
      case MTLS -> TlsServerCredentials.newBuilder().keyManager(identity).trustManager(callerVerifier)
          .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE).build();
    };
  }

  Optional<ServerInterceptor> serverInterceptor() {
    return switch (config.serverMode()) {
      case PLAINTEXT -> Optional.empty();
      case TLS -> callerVerifier == null ? Optional.empty()
          : Optional.of(new PeerIdentityInterceptor(TrustedPeers.ANY_FROM_CA, false));
      case MTLS -> Optional.of(new PeerIdentityInterceptor(config.trustedPeers(), config.servicePeers(), true));
    };
  }

  /**
   * Credentials of client channels: with {@code tls} or {@code mtls}, the servers' certificates must chain
   * to the CA and carry one of {@code channel.servers()} as their identity (no host name check: the
   * identity is what names a service here, and one channel reaches several hosts); with {@code mtls} the
   * channel presents this process's certificate.
   */
  public ChannelCredentials channelCredentials(ChannelTlsConfig channel) {
    if (channel.mode() == TlsMode.PLAINTEXT) {
      return InsecureChannelCredentials.create();
    }
    TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder()
        .trustManager(trustManager(serverIdentityCheck(channel.servers())));
    if (channel.mode() == TlsMode.MTLS) {
      builder.keyManager(identity);
    }
    return builder.build();
  }

  /**
   * Credentials for the container health probe, which calls its own process over loopback: it presents the
   * process's own certificate (health is open to any the CA signed) and checks the server's against the CA
   * when there is one; without a CA it cannot, and it sends nothing secret.
   */
  public ChannelCredentials loopbackProbeCredentials() throws GeneralSecurityException {
    if (config.serverMode() == TlsMode.PLAINTEXT) {
      return InsecureChannelCredentials.create();
    }
    TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder();
    if (roots != null) {
      builder.trustManager(trustManager(null));
    } else {
      builder.trustManager(AdvancedTlsX509TrustManager.newBuilder()
          .setVerification(Verification.INSECURELY_SKIP_ALL_VERIFICATION).build());
    }
    if (identity != null) {
      builder.keyManager(identity);
    }
    return builder.build();
  }

  /** Fields of the start-up line naming each port's mode. */
  public Fields describeServer() {
    Fields fields = new Fields().add("grpc_transport", config.serverMode().text());
    return switch (config.serverMode()) {
      case PLAINTEXT -> fields;
      case TLS -> fields.add("grpc_client_cert", callerVerifier == null ? "none" : "optional");
      case MTLS -> fields.add("grpc_client_cert", "required").add("grpc_trusted_peers", config.trustedPeers().describe());
    };
  }

  private AdvancedTlsX509TrustManager trustManager(SslSocketAndEnginePeerVerifier extraCheck) {
    try {
      AdvancedTlsX509TrustManager.Builder builder = AdvancedTlsX509TrustManager.newBuilder()
          // No host name check: a peer is named by its certificate's URI identity (see channelCredentials).
          .setVerification(Verification.CERTIFICATE_ONLY_VERIFICATION);
      if (extraCheck != null) {
        builder.setSslSocketAndEnginePeerVerifier(extraCheck);
      }
      AdvancedTlsX509TrustManager manager = builder.build();
      manager.updateTrustCredentials(roots);
      trustManagers.add(manager);
      return manager;
    } catch (IOException | GeneralSecurityException e) {
      // The roots were parsed already; an in-memory key store cannot fail to take them.
      throw new IllegalStateException("cannot build a trust manager", e);
    }
  }

  private static SslSocketAndEnginePeerVerifier serverIdentityCheck(TrustedPeers servers) {
    if (servers.anyFromCa()) {
      return null;
    }
    return new SslSocketAndEnginePeerVerifier() {
      @Override
      public void verifyPeerCertificate(X509Certificate[] chain, String authType, Socket socket)
          throws CertificateException {
        check(chain);
      }

      @Override
      public void verifyPeerCertificate(X509Certificate[] chain, String authType, SSLEngine engine)
          throws CertificateException {
        check(chain);
      }

      private void check(X509Certificate[] chain) throws CertificateException {
        Optional<PeerIdentity> peer = PeerIdentity.of(chain[0]);
        if (peer.isEmpty() || !servers.allows(peer.get().uri())) {
          throw new CertificateException("the server's certificate identity "
              + peer.map(PeerIdentity::uri).orElse("(none)") + " is not one of " + servers.describe());
        }
      }
    };
  }

  private void reloadChanged() {
    try {
      if (identity != null) {
        reloadIdentity();
      }
      if (roots != null) {
        reloadRoots();
      }
    } catch (RuntimeException e) { // a periodic task that throws is never run again
      Events.warn(log, "tls_reload_failed").setCause(e).log();
    }
  }

  private void reloadIdentity() {
    byte[] cert;
    byte[] key;
    try {
      cert = Files.readAllBytes(config.certFile().orElseThrow());
      key = Files.readAllBytes(config.keyFile().orElseThrow());
    } catch (IOException e) { // e.g. between a rotation's delete and write: the next period reads again
      Events.warn(log, "tls_reload_failed").addKeyValue("what", "identity").addKeyValue("detail", e.toString())
          .addKeyValue("serving", "previous").log();
      return;
    }
    byte[] digest = digest(cert, key);
    if (Arrays.equals(digest, identityDigest)) {
      return;
    }
    identityDigest = digest; // a bad pair is reported once, not every period, until the files change again
    try {
      Identity loaded = parseIdentity(cert, key);
      requireMatch(loaded.key(), loaded.chain()[0]);
      identity.updateIdentityCredentials(loaded.chain(), loaded.key());
      certificate = loaded.chain()[0];
      logIdentity("tls_identity_reloaded", certificate);
    } catch (IOException | GeneralSecurityException e) {
      Events.warn(log, "tls_reload_failed").addKeyValue("what", "identity").addKeyValue("detail", e.getMessage())
          .addKeyValue("serving", "previous").log();
    }
  }

  private void reloadRoots() {
    byte[] ca;
    try {
      ca = Files.readAllBytes(config.caFile().orElseThrow());
    } catch (IOException e) {
      Events.warn(log, "tls_reload_failed").addKeyValue("what", "ca").addKeyValue("detail", e.toString())
          .addKeyValue("trusting", "previous").log();
      return;
    }
    byte[] digest = digest(ca);
    if (Arrays.equals(digest, caDigest)) {
      return;
    }
    caDigest = digest;
    try {
      X509Certificate[] loaded = parseRoots(ca);
      for (AdvancedTlsX509TrustManager manager : trustManagers) {
        manager.updateTrustCredentials(loaded);
      }
      roots = loaded;
      Events.info(log, "tls_ca_reloaded").addKeyValue("certificates", loaded.length).log();
    } catch (IOException | GeneralSecurityException e) {
      Events.warn(log, "tls_reload_failed").addKeyValue("what", "ca").addKeyValue("detail", e.getMessage())
          .addKeyValue("trusting", "previous").log();
    }
  }

  private static Identity parseIdentity(byte[] cert, byte[] key) throws IOException, GeneralSecurityException {
    X509Certificate[] chain = CertificateUtils.getX509Certificates(new ByteArrayInputStream(cert));
    if (chain.length == 0) {
      throw new CertificateException("TLS_CERT_FILE holds no PEM certificate");
    }
    if (!new String(key, StandardCharsets.US_ASCII).contains("-----BEGIN PRIVATE KEY-----")) {
      throw new GeneralSecurityException("TLS_KEY_FILE must hold a PKCS #8 PEM key (-----BEGIN PRIVATE KEY-----)");
    }
    return new Identity(chain, CertificateUtils.getPrivateKey(new ByteArrayInputStream(key)));
  }

  /** The key must be the certificate's: sign with the one, verify with the other. */
  private static void requireMatch(PrivateKey key, X509Certificate certificate) throws GeneralSecurityException {
    String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
    byte[] probe = "warehouse-key-match".getBytes(StandardCharsets.US_ASCII);
    Signature signer = Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update(probe);
    byte[] signature = signer.sign();
    Signature verifier = Signature.getInstance(algorithm);
    try {
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(probe);
      if (verifier.verify(signature)) {
        return;
      }
    } catch (GeneralSecurityException mismatchedType) {
      // an RSA key beside an EC certificate, say: the same answer as a wrong key
    }
    throw new GeneralSecurityException("TLS_KEY_FILE is not the key of the first certificate in TLS_CERT_FILE");
  }

  private static X509Certificate[] parseRoots(byte[] ca) throws CertificateException {
    X509Certificate[] roots = CertificateUtils.getX509Certificates(new ByteArrayInputStream(ca));
    if (roots.length == 0) {
      throw new CertificateException("TLS_CA_FILE holds no PEM certificate");
    }
    return roots;
  }

  private static void logIdentity(String event, X509Certificate certificate) {
    List<String> uris = PeerIdentity.uriSans(certificate);
    Instant notAfter = certificate.getNotAfter().toInstant();
    Events.info(log, event).addKeyValue("identity", uris.isEmpty() ? "none" : String.join(",", uris))
        .addKeyValue("serial", certificate.getSerialNumber().toString(16)).addKeyValue("not_after", notAfter.toString())
        .log();
    if (notAfter.isBefore(Instant.now())) {
      Events.warn(log, "tls_certificate_expired").addKeyValue("serial", certificate.getSerialNumber().toString(16))
          .addKeyValue("not_after", notAfter.toString()).addKeyValue("detail", "peers will refuse it; rotate the files")
          .log();
    }
  }

  private static byte[] digest(byte[]... parts) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (byte[] part : parts) {
        sha.update(part);
        sha.update((byte) 0); // "ab"+"c" is not "a"+"bc"
      }
      return sha.digest();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /** Stops watching the files. Connections keep the material they were opened with. */
  @Override
  public synchronized void close() {
    if (watcher != null) {
      watcher.shutdownNow();
      watcher = null;
    }
  }
}
