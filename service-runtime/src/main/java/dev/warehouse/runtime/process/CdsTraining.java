package dev.warehouse.runtime.process;

import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.tls.TransportSecurity;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The training run of a jar's class-data-sharing archive:
 * {@code java -XX:ArchiveClassesAtExit=app.jsa -jar app.jar train-cds}. It starts the process through its
 * real start path, answers the probe the container's health check makes and one call of its serving path,
 * stops, and exits 0, at which the JVM writes every class it loaded into the archive; a later
 * {@code java -XX:SharedArchiveFile=app.jsa -jar app.jar} maps them instead of loading and verifying them
 * from the jar (docs/operations/deploy.md#class-data-sharing). On JDK 25 the same run trains the jar's AOT cache,
 * as the image does: {@code java -XX:AOTCacheOutput=app.aot -jar app.jar train-cds}, used with
 * {@code -XX:AOTCache=app.aot}.
 *
 * <p>The run needs nothing around it, so that an image's build can make it: it ignores the environment
 * and starts on a fixed configuration of its own, with its ports on loopback, mutual TLS with a throwaway
 * identity (made by the JDK's keytool, in a temporary directory removed afterwards) and a DynamoDB endpoint
 * that refuses connections. The DynamoDB call of its serving path fails: it is made for the classes it
 * loads, and the process has no table to read.
 */
public final class CdsTraining implements AutoCloseable {

  /** The command, the first argument of {@code java -jar <service>.jar}. */
  public static final String COMMAND = "train-cds";
  /** The throwaway certificate's identity: the one peer every training process admits. */
  public static final String IDENTITY = "spiffe://warehouse.local/cds-training";
  /** How long a training call may take; they fail fast (refused connections), this bounds a stuck one. */
  public static final long CALL_DEADLINE_MS = 5_000;

  static {
    // As every process starts: the training must load what they load (and log as they log).
    JvmSetup.configureLogging();
    JvmSetup.configureNetty();
  }

  private static final Logger log = LoggerFactory.getLogger(CdsTraining.class);

  private final Path dir;
  private final Map<String, String> environment;

  private CdsTraining(Path dir, Map<String, String> environment) {
    this.dir = dir;
    this.environment = environment;
  }

  /** Whether {@code args} ask for the training run. */
  public static boolean requested(String[] args) {
    return args.length > 0 && args[0].equals(COMMAND);
  }

  /** What one process does in its training run, given the run's workspace. */
  @FunctionalInterface
  public interface Run {
    void run(CdsTraining training) throws Exception;
  }

  /**
   * Runs {@code run} in a new workspace and exits: 0 when it finished, so that the JVM writes the archive,
   * 1 when it failed (the archive is then written too, but the build that asked for it should stop).
   */
  public static void runAndExit(String service, Run run) {
    long started = System.nanoTime();
    int status;
    try (CdsTraining training = prepare()) {
      run.run(training);
      Events.info(log, "cds_training_done").addKeyValue("service", service)
          .addKeyValue("training_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).log();
      status = 0;
    } catch (Exception | Error e) {
      Events.error(log, "cds_training_failed").addKeyValue("service", service).setCause(e).log();
      status = 1;
    }
    System.exit(status);
  }

  /**
   * A temporary directory with the throwaway identity, and the settings every process's training run starts
   * with; {@link #close} removes the directory.
   */
  public static CdsTraining prepare() throws IOException, GeneralSecurityException, InterruptedException {
    Path dir = Files.createTempDirectory("cds-training-");
    try {
      writeIdentity(dir);
      Map<String, String> env = new HashMap<>();
      env.put("GRPC_PORT", "0");
      env.put("METRICS_PORT", "0");
      env.put("GRPC_BIND_ADDRESS", "127.0.0.1");
      env.put("METRICS_BIND_ADDRESS", "127.0.0.1");
      env.put("GRPC_TLS_MODE", "mtls");
      env.put("TLS_CERT_FILE", dir.resolve("cert.pem").toString());
      env.put("TLS_KEY_FILE", dir.resolve("key.pem").toString());
      env.put("TLS_CA_FILE", dir.resolve("cert.pem").toString()); // self-signed: its own CA
      env.put("TLS_TRUSTED_PEERS", IDENTITY);
      env.put("DYNAMODB_ENDPOINT", "http://127.0.0.1:" + closedPort());
      env.put("DYNAMODB_CALL_TIMEOUT_MS", "1000");
      env.put("PAGE_TOKEN_KEY", Base64.getEncoder().encodeToString(randomBytes(32)));
      env.put("SHUTDOWN_DRAIN_MS", "0");
      env.put("SHUTDOWN_GRACE_SECONDS", "1");
      return new CdsTraining(dir, env);
    } catch (IOException | GeneralSecurityException | InterruptedException | RuntimeException e) {
      delete(dir);
      throw e;
    }
  }

  /** The run's settings, to add a process's own to: a copy. */
  public Map<String, String> environment() {
    return new HashMap<>(environment);
  }

  /** The run's temporary directory, for the files a process's own settings name. */
  public Path dir() {
    return dir;
  }

  /** An address where nothing listens: calls to it fail at once, as the run's DynamoDB endpoint's do. */
  public String unreachableAddress() throws IOException {
    return "127.0.0.1:" + closedPort();
  }

  /**
   * Asks the process's health service on loopback as the container probe does ({@link HealthProbe}, with the
   * process's own TLS settings).
   *
   * @throws IllegalStateException when it does not answer SERVING
   */
  public void probe(int port) throws Exception {
    ChannelCredentials credentials;
    try (TransportSecurity transport = TransportSecurity.load(TlsConfig.fromEnvironment(environment))) {
      credentials = transport.loopbackProbeCredentials();
    }
    if (HealthProbe.check(port, "", credentials) != 0) {
      throw new IllegalStateException("the process did not answer SERVING on port " + port);
    }
  }

  /** One call of the serving path, whose outcome does not matter (the run has no store behind it). */
  @FunctionalInterface
  public interface Call {
    void call(ManagedChannel channel) throws Exception;
  }

  /**
   * Makes {@code calls} to the process on loopback as the throwaway identity, each with the training deadline;
   * their gRPC errors are expected and logged, not thrown.
   */
  public void call(int port, List<Call> calls) throws Exception {
    ManagedChannel channel;
    try (TransportSecurity transport = TransportSecurity.load(TlsConfig.fromEnvironment(environment))) {
      channel = NettyChannelBuilder.forAddress("127.0.0.1", port, transport.loopbackProbeCredentials()).build();
    }
    try {
      for (Call call : calls) {
        try {
          call.call(channel);
        } catch (StatusRuntimeException expected) {
          Events.info(log, "cds_training_call").addKeyValue("status", expected.getStatus().getCode().name()).log();
        }
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** Removes the temporary directory. */
  @Override
  public void close() throws IOException {
    delete(dir);
  }

  /**
   * A self-signed EC P-256 certificate with {@link #IDENTITY} as its URI SAN, and its key, as the PEM files
   * {@code TLS_CERT_FILE} and {@code TLS_KEY_FILE} read. keytool makes it (every JDK and JRE has it; the
   * services' jars carry no certificate builder); its PKCS #12 store is read back here and written as PEM.
   */
  private static void writeIdentity(Path dir) throws IOException, GeneralSecurityException, InterruptedException {
    Path store = dir.resolve("identity.p12");
    String password = HexFormat.of().formatHex(randomBytes(16));
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process process = new ProcessBuilder(keytool.toString(), "-genkeypair", "-keystore", store.toString(),
        "-storetype", "PKCS12", "-storepass", password, "-alias", "training", "-keyalg", "EC", "-groupname", "secp256r1",
        "-dname", "CN=cds-training", "-ext", "san=uri:" + IDENTITY, "-validity", "2")
        .redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      process.destroyForcibly();
      throw new IOException("keytool could not make the training identity: " + output.strip());
    }
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      keys.load(in, password.toCharArray());
    }
    Certificate certificate = keys.getCertificate("training");
    java.security.Key key = keys.getKey("training", password.toCharArray());
    Files.writeString(dir.resolve("cert.pem"), pem("CERTIFICATE", certificate.getEncoded()));
    Files.writeString(dir.resolve("key.pem"), pem("PRIVATE KEY", key.getEncoded())); // PKCS #8, as TLS_KEY_FILE needs
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }

  private static byte[] randomBytes(int n) {
    byte[] bytes = new byte[n];
    new SecureRandom().nextBytes(bytes);
    return bytes;
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static void delete(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }
}
