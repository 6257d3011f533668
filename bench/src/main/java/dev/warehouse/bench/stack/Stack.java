package dev.warehouse.bench.stack;

import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoClients;
import dev.warehouse.runtime.moto.MotoProcess;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The system as the benchmark runs it: moto through our launcher (or another DynamoDB endpoint), one
 * inventory-service, one order-service and the gateway, each a separate JVM from its runnable jar,
 * services at -Xmx256m.
 */
public final class Stack implements AutoCloseable {

  /** The services' DynamoDB call timeout against the emulator (production default: 3 s). */
  public static final long EMULATOR_CALL_TIMEOUT_MS = 10_000;
  /** The JVM options file every process of ours starts with, under the project. */
  public static final String JVM_OPTIONS = "deploy/jvm.options";

  public final Path root;
  public final URI dynamoEndpoint;
  public final String table;
  public final Proc inventory;
  public final Proc orders;
  public final Proc gateway;
  /** Milliseconds from launch to SERVING, per process, and for the whole stack. */
  public final Map<String, Long> startupMs = new LinkedHashMap<>();
  private final MotoProcess moto;
  private final List<Proc> procs = new ArrayList<>();

  private Stack(Path root, MotoProcess moto, URI dynamoEndpoint, String table, Proc inventory, Proc orders, Proc gateway) {
    this.root = root;
    this.moto = moto;
    this.dynamoEndpoint = dynamoEndpoint;
    this.table = table;
    this.inventory = inventory;
    this.orders = orders;
    this.gateway = gateway;
  }

  /**
   * Starts moto through the serializing launcher on a free port, with {@code flags} besides
   * {@code --lenient}: the strict mode's bookkeeping (item history, tokens) is the stand-in's cost, not
   * ours, and would move the moto half's figures away from earlier runs'.
   */
  public static MotoProcess startMoto(Path root, String... flags) {
    List<String> all = new ArrayList<>(List.of("--lenient"));
    all.addAll(List.of(flags));
    return MotoProcess.start(root.resolve(MotoProcess.LAUNCHER), all, false);
  }

  /** Starts everything, the services on {@code table} (created at start-up), and waits until all serve. */
  public static Stack start(Path root, String table) throws Exception {
    MotoProcess moto = startMoto(root);
    try {
      return start(root, Jars.of(root), table, moto.endpoint(), moto);
    } catch (Exception e) {
      moto.close();
      throw e;
    }
  }

  /**
   * Starts moto through the launcher in its strict mode with {@code flags} (its per-key throughput, say),
   * then everything on it; the stack stops moto with the rest.
   */
  public static Stack startStrict(Path root, String table, String... flags) throws Exception {
    MotoProcess moto = MotoProcess.start(root.resolve(MotoProcess.LAUNCHER), List.of(flags), false);
    try {
      return start(root, Jars.of(root), table, moto.endpoint(), moto);
    } catch (Exception e) {
      moto.close();
      throw e;
    }
  }

  /** The services and the gateway on a DynamoDB endpoint that is already running. */
  public static Stack on(Path root, String table, URI dynamoEndpoint) throws Exception {
    return on(root, Jars.of(root), table, dynamoEndpoint);
  }

  /** The same, from {@code jars}: another build's (a baseline), its logs under names of its own. */
  public static Stack on(Path root, Jars jars, String table, URI dynamoEndpoint) throws Exception {
    return start(root, jars, table, dynamoEndpoint, null);
  }

  private static Stack start(Path root, Jars jars, String table, URI endpoint, MotoProcess moto) throws Exception {
    Path logs = root.resolve("target/bench-logs");
    Map<String, String> serviceEnv = serviceEnv(endpoint, table);
    long launched = System.nanoTime();
    // What has been launched so far, stopped again if the stack does not come up: a process left running
    // would outlive the benchmark (an older build that refuses its settings, say).
    List<Proc> launchedProcs = new ArrayList<>();
    try {
      Proc inventory = java(root, jars, logs, "inventory-service", serviceEnv);
      launchedProcs.add(inventory);
      Map<String, String> orderEnv = new LinkedHashMap<>(serviceEnv);
      orderEnv.put("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort); // its orders' stock, held there
      Proc orders = java(root, jars, logs, "order-service", orderEnv);
      launchedProcs.add(orders);
      Map<String, Long> startupMs = new LinkedHashMap<>();
      startupMs.put("inventory-service", inventory.awaitServing(120_000));
      startupMs.put("order-service", orders.awaitServing(120_000));
      // Without authentication: the scenarios measure forwarding, as they have since before it existed.
      Proc gateway = java(root, jars, logs, "gateway", Map.of("AUTH_MODE", "none",
          "INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort, "ORDER_ADDRESSES", "127.0.0.1:" + orders.grpcPort));
      launchedProcs.add(gateway);
      startupMs.put("gateway", gateway.awaitServing(120_000));
      startupMs.put("whole stack", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - launched));
      Stack started = new Stack(root, moto, endpoint, table, inventory, orders, gateway);
      started.startupMs.putAll(startupMs);
      started.procs.addAll(List.of(gateway, orders, inventory));
      return started;
    } catch (Exception | Error e) {
      for (Proc p : launchedProcs) {
        p.close();
      }
      throw e;
    }
  }

  /** What a service of the benchmark is started with: the endpoint, its table (created at start-up), a shared page-token key. */
  public static Map<String, String> serviceEnv(URI endpoint, String table) {
    String key = Base64.getEncoder().encodeToString("bench-only-page-token-key-32-byt".getBytes(StandardCharsets.US_ASCII));
    // moto answers in seconds when it falls behind; with the 3 s production default the SDK's attempt
    // timeouts re-send requests moto is still working on, and the retries feed the backlog.
    return Map.of("DYNAMODB_ENDPOINT", endpoint.toString(), "TABLE_NAME", table, "TABLE_AUTO_CREATE", "true",
        "PAGE_TOKEN_KEY", key, "DYNAMODB_CALL_TIMEOUT_MS", Long.toString(EMULATOR_CALL_TIMEOUT_MS));
  }

  /** A DynamoDB client of the benchmark's own (loading data, counting), on {@code endpoint}. */
  public static DynamoDbAsyncClient client(URI endpoint) {
    return DynamoClients.create(new StoreServiceConfig("bench", 0, 0, Optional.of(endpoint), StoreServiceConfig.DEFAULT_REGION,
        "unused", false, Optional.empty(), Duration.ofMinutes(5), StoreServiceConfig.DEFAULT_DYNAMO_IO_THREADS,
        Duration.ZERO, Duration.ofSeconds(1), StoreServiceConfig.DEFAULT_HOT_KEY_LOG_SHARE), List.of());
  }

  /** A JVM of the project: {@code java -Xmx256m -jar MODULE/target/MODULE.jar} on free ports. */
  public static Proc java(Path root, Path logs, String module, Map<String, String> env) throws IOException {
    return java(root, logs, module, module, env);
  }

  /** The same, named {@code name} (its log: {@code logs/NAME.log}): for a second JVM of one module. */
  public static Proc java(Path root, Path logs, String module, String name, Map<String, String> env) throws IOException {
    return java(root, logs, module, name, env, ownJava(), List.of());
  }

  /**
   * The same, on the JVM {@code java} (a java executable) with {@code jvmFlags} before {@code -jar}: scenario 5's
   * JVMs, each from its cache or archive.
   */
  public static Proc java(Path root, Path logs, String module, String name, Map<String, String> env, Path java,
      List<String> jvmFlags) throws IOException {
    return java(root, Jars.of(root).jar(module), logs, name, env, java, jvmFlags);
  }

  /** The java executable of the JVM running the benchmark. */
  public static Path ownJava() {
    return Path.of(System.getProperty("java.home"), "bin", "java");
  }

  private static Proc java(Path root, Jars jars, Path logs, String module, Map<String, String> env) throws IOException {
    return java(root, jars.jar(module), logs, jars.name(module), env, ownJava(), List.of());
  }

  /** Every process starts with the project's JVM options, as the image and run.sh start it (deploy/jvm.options). */
  private static Proc java(Path root, Path jar, Path logs, String name, Map<String, String> env, Path java,
      List<String> jvmFlags) throws IOException {
    int grpc = Proc.freePort();
    int metrics = Proc.freePort();
    Map<String, String> all = new LinkedHashMap<>(env);
    all.put("GRPC_PORT", Integer.toString(grpc));
    all.put("METRICS_PORT", Integer.toString(metrics));
    List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "@" + root.resolve(JVM_OPTIONS)));
    command.addAll(jvmFlags);
    command.addAll(List.of("-jar", jar.toString()));
    return Proc.start(name, command, all, logs, grpc, metrics);
  }

  /** moto's process id, when this stack started moto. */
  public java.util.OptionalLong motoPid() {
    return moto == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(moto.pid());
  }

  public List<Proc> processes() {
    return List.copyOf(procs);
  }

  @Override
  public void close() throws Exception {
    for (Proc p : procs) {
      p.close();
    }
    if (moto != null) {
      moto.close();
    }
  }
}
