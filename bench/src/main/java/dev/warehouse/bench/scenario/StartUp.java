package dev.warehouse.bench.scenario;

import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.scenario.StartUpJvms.Jvm;
import dev.warehouse.bench.scenario.StartUpJvms.Trained;
import dev.warehouse.bench.stack.Jars;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.runtime.dynamo.TableSetup;
import dev.warehouse.runtime.moto.MotoProcess;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * Scenario 5: start-up, from launching a JVM ({@code java -Xmx256m @deploy/jvm.options -jar …}) to its gRPC health check answering
 * SERVING, on each of {@link StartUpJvms}' JVMs: the benchmark's own (JDK 17) without and with the
 * class-data-sharing archive that {@code run.sh} makes there, and a JDK 25 without and with the AOT cache that the
 * image and {@code run.sh} make with it (each jar's {@code train-cds} run, trained here by the JVM that uses it).
 * Without a JDK 25 its columns are not measured, and say so.
 *
 * <p>Each process alone: the table already exists and is not checked ({@code TABLE_AUTO_CREATE} unset, as in
 * production: creating or checking it when asked is not start-up), and what it calls is already serving. Then
 * the whole stack, started as compose starts it: both services at once, the gateway once they serve. Every
 * process runs with run.sh's settings: the services over mutual TLS, the gateway checking JWTs and calling
 * them over mutual TLS. The JVMs take turns, in an order turned by one each round, so that a slow stretch of
 * the machine falls on all of them and none always follows the same one; one unmeasured start of each process
 * on each JVM before them warms the page cache and this tool's own health-check client.
 */
public final class StartUp {

  /** The targets on this 2-core machine: each process healthy in under 1 s alone, the stack in under 3 s. */
  static final long ALONE_TARGET_MS = 1_000;
  static final long STACK_TARGET_MS = 3_000;
  static final List<String> PROCESSES = List.of("inventory-service", "order-service", "gateway");
  static final String STACK = "whole stack";
  private static final String GATEWAY_ID = "spiffe://warehouse.local/gateway";
  private static final long TIMEOUT_MS = 120_000;
  /** When resident memory is read after SERVING: the JVM's metrics are bound by then, the start's garbage not yet collected. */
  private static final long RSS_AFTER_MS = 1_000;

  /** One start alone: milliseconds to SERVING, and resident bytes a second later. */
  record Start(long ms, long rssBytes) {}

  private StartUp() {}

  /** The JDK 25 to measure ({@link StartUpJvms#java25}): checked when the run starts, before any scenario. */
  public static Optional<Path> java25(Optional<String> option, Optional<String> home) throws Exception {
    return StartUpJvms.java25(option, home);
  }

  /** Runs the scenario; {@code java25} is a JDK 25's java ({@link StartUpJvms#java25}), empty when there is none. */
  public static void run(Path root, Settings settings, Report report, Optional<Path> java25) throws Exception {
    Path work = root.resolve("target/bench-startup");
    Path logs = root.resolve("target/bench-logs");
    Path certs = work.resolve("certs");
    Path tokens = work.resolve("tokens");
    Path policy = root.resolve("deploy/auth/policy.dev.yaml");
    SecurityCost.devKit(root, work, "certs", certs.toString());
    SecurityCost.devKit(root, work, "dev-tokens", tokens.toString(), policy.toString());
    ChannelCredentials clientCert = TlsChannelCredentials.newBuilder().trustManager(certs.resolve("ca.pem").toFile())
        .keyManager(certs.resolve("client.pem").toFile(), certs.resolve("client-key.pem").toFile()).build();

    List<Jvm> jvms = jvms(root, work, java25);
    String table = "bench-" + UUID.randomUUID();
    int n = settings.startupRuns();
    Map<String, Map<String, List<Long>>> runs = new LinkedHashMap<>();
    Map<String, Map<String, List<Long>>> rss = new LinkedHashMap<>();
    try (MotoProcess moto = Stack.startMoto(root);
        DynamoDbAsyncClient dynamo = Stack.client(moto.endpoint())) {
      TableSetup.ensureTable(dynamo, table, Duration.ofMinutes(2));
      Launcher launcher = new Launcher(root, logs, certs, tokens, policy, clientCert, baseEnv(moto.endpoint(), table));

      // Alone: each process with what it calls already serving (the order-service holds stock at the
      // inventory, the gateway forwards to both), so that nothing it waits for is counted.
      Jvm fastest = jvms.get(jvms.size() - 1);
      aloneRuns(runs, rss, launcher, jvms, "inventory-service", Map.of(), n);
      try (Proc inventory = launcher.start("inventory-service", "inventory-dependency", fastest, Map.of())) {
        launcher.await(inventory);
        Map<String, String> toInventory = Map.of("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort);
        aloneRuns(runs, rss, launcher, jvms, "order-service", toInventory, n);
        try (Proc orders = launcher.start("order-service", "order-dependency", fastest, toInventory)) {
          launcher.await(orders);
          aloneRuns(runs, rss, launcher, jvms, "gateway", Map.of("INVENTORY_ADDRESSES",
              "127.0.0.1:" + inventory.grpcPort, "ORDER_ADDRESSES", "127.0.0.1:" + orders.grpcPort), n);
        }
      }

      for (Jvm jvm : jvms) {
        stack(launcher, jvm); // unmeasured, as the first start of each process above
      }
      for (int i = 0; i < n; i++) {
        for (Jvm jvm : StartUpJvms.rotated(jvms, i)) {
          runs.computeIfAbsent(jvm.key(), m -> new LinkedHashMap<>()).computeIfAbsent(STACK, p -> new ArrayList<>())
              .add(stack(launcher, jvm));
        }
      }
    }
    write(report, jvms, runs, rss, n, java25.isPresent());
  }

  /**
   * The benchmark's own java without and with each jar's archive, then the JDK 25 without and with each jar's
   * cache: the fastest way last, which also starts what the processes alone call.
   */
  private static List<Jvm> jvms(Path root, Path work, Optional<Path> java25) throws Exception {
    Path own = Stack.ownJava();
    String ownVersion = StartUpJvms.version(own);
    int ownFeature = StartUpJvms.feature(ownVersion);
    Map<String, Trained> archives = new LinkedHashMap<>();
    Map<String, Trained> caches = new LinkedHashMap<>();
    for (String module : PROCESSES) {
      Path jar = Jars.of(root).jar(module);
      archives.put(module, StartUpJvms.archive(own, jar, work, module));
      if (java25.isPresent()) {
        caches.put(module, StartUpJvms.aotCache(java25.get(), jar, work, module));
      }
    }
    // Keys by role, not by release: the benchmark may itself run on a JDK 25.
    List<Jvm> jvms = new ArrayList<>(List.of(
        new Jvm("plain", "JDK " + ownFeature, own, ownVersion, Map.of()),
        new Jvm("cds", "JDK " + ownFeature + " + CDS archive", own, ownVersion, archives)));
    if (java25.isPresent()) {
      String version = StartUpJvms.version(java25.get());
      int feature = StartUpJvms.feature(version);
      jvms.add(new Jvm("plain_25", "JDK " + feature, java25.get(), version, Map.of()));
      jvms.add(new Jvm("aot", "JDK " + feature + " + AOT cache", java25.get(), version, caches));
    }
    return jvms;
  }

  private static void aloneRuns(Map<String, Map<String, List<Long>>> runs, Map<String, Map<String, List<Long>>> rss,
      Launcher launcher, List<Jvm> jvms, String module, Map<String, String> env, int n) throws Exception {
    for (Jvm jvm : jvms) {
      launcher.alone(module, jvm, env); // unmeasured
    }
    for (int i = 0; i < n; i++) {
      for (Jvm jvm : StartUpJvms.rotated(jvms, i)) {
        Start start = launcher.alone(module, jvm, env);
        runs.computeIfAbsent(jvm.key(), m -> new LinkedHashMap<>()).computeIfAbsent(module, p -> new ArrayList<>())
            .add(start.ms());
        rss.computeIfAbsent(jvm.key(), m -> new LinkedHashMap<>()).computeIfAbsent(module, p -> new ArrayList<>())
            .add(start.rssBytes() >> 20);
      }
    }
  }

  /** Milliseconds from the first launch to the gateway's SERVING: the services together, the gateway once they serve. */
  private static long stack(Launcher launcher, Jvm jvm) throws Exception {
    long launched = System.nanoTime();
    try (Proc inventory = launcher.start("inventory-service", "stack-inventory-service", jvm, Map.of());
        Proc orders = launcher.start("order-service", "stack-order-service", jvm,
            Map.of("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort))) {
      launcher.await(inventory);
      launcher.await(orders);
      try (Proc gateway = launcher.start("gateway", "stack-gateway", jvm, Map.of(
          "INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort, "ORDER_ADDRESSES", "127.0.0.1:" + orders.grpcPort))) {
        launcher.await(gateway);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - launched);
      }
    }
  }

  private static Map<String, String> baseEnv(URI endpoint, String table) {
    Map<String, String> env = new LinkedHashMap<>(Stack.serviceEnv(endpoint, table));
    env.remove("TABLE_AUTO_CREATE"); // the table is there: checking it is not start-up
    // Stopping between runs need not wait for balancers that are not there.
    env.put("SHUTDOWN_DRAIN_MS", "0");
    env.put("GRPC_BIND_ADDRESS", "127.0.0.1");
    env.put("METRICS_BIND_ADDRESS", "127.0.0.1");
    return env;
  }

  /** Starts one process of the stack with run.sh's settings, on one of the JVMs. */
  private record Launcher(Path root, Path logs, Path certs, Path tokens, Path policy, ChannelCredentials clientCert,
      Map<String, String> baseEnv) {

    Proc start(String module, String name, Jvm jvm, Map<String, String> extra) throws IOException {
      Map<String, String> env = new LinkedHashMap<>(baseEnv);
      if (module.equals("gateway")) {
        env.keySet().removeIf(v -> v.startsWith("DYNAMODB_") || v.startsWith("TABLE_") || v.startsWith("PAGE_TOKEN"));
        env.putAll(Map.of("BACKEND_TLS_MODE", "mtls",
            "INVENTORY_TRUSTED_PEERS", "spiffe://warehouse.local/inventory-service",
            "ORDER_TRUSTED_PEERS", "spiffe://warehouse.local/order-service",
            "AUTH_MODE", "jwt", "AUTH_POLICY_FILE", policy.toString(),
            "AUTH_JWKS_FILE", tokens.resolve("jwks.json").toString(), "AUTH_JWT_ISSUER", "warehouse-dev",
            "AUTH_JWT_AUDIENCE", "warehouse-gateway"));
        env.putAll(identity("gateway"));
      } else {
        env.putAll(identity(module));
        env.put("GRPC_TLS_MODE", "mtls");
        env.put("TLS_TRUSTED_PEERS", GATEWAY_ID);
        if (module.equals("order-service")) {
          env.put("INVENTORY_TLS_MODE", "mtls");
          env.put("INVENTORY_TRUSTED_PEERS", "spiffe://warehouse.local/inventory-service");
        }
      }
      env.putAll(extra);
      return Stack.java(root, logs, module, name, env, jvm.java(), jvm.flags(module));
    }

    private Map<String, String> identity(String workload) {
      return Map.of("TLS_CA_FILE", certs.resolve("ca.pem").toString(),
          "TLS_CERT_FILE", certs.resolve(workload + ".pem").toString(),
          "TLS_KEY_FILE", certs.resolve(workload + "-key.pem").toString());
    }

    /** Milliseconds from launch to SERVING; the gateway's client port is plaintext, as run.sh serves it. */
    long await(Proc proc) throws InterruptedException {
      return proc.name.contains("gateway") ? proc.awaitServing(TIMEOUT_MS, InsecureChannelCredentials.create())
          : proc.awaitServing(TIMEOUT_MS, clientCert);
    }

    /** One start of {@code module} alone: launch, SERVING, its resident memory a second later, stop. */
    Start alone(String module, Jvm jvm, Map<String, String> extra) throws Exception {
      for (int attempt = 1; ; attempt++) {
        try (Proc proc = start(module, module + "-alone", jvm, extra)) {
          long ms;
          try {
            ms = await(proc);
          } catch (IllegalStateException exited) {
            // A free port picked for it was taken before it bound it (another process's connection): the start
            // measured nothing, so it is made again on other ports rather than failing the run.
            if (attempt < 3 && proc.lostItsPort()) {
              continue;
            }
            throw exited;
          }
          Thread.sleep(RSS_AFTER_MS);
          return new Start(ms, proc.rssBytes());
        }
      }
    }
  }

  static void write(Report report, List<Jvm> jvms, Map<String, Map<String, List<Long>>> runs,
      Map<String, Map<String, List<Long>>> rss, int n, boolean aotMeasured) {
    // The targets are judged on the way the image starts: the AOT cache, or the archive when it was not measured.
    Jvm judged = jvms.get(jvms.size() - 1);
    List<String> headers = new ArrayList<>(List.of("Process"));
    jvms.forEach(jvm -> headers.add(jvm.label() + ": median [runs]"));
    if (!aotMeasured) {
      headers.add("JDK 25 + AOT cache");
    }
    headers.addAll(List.of("Target (ms)", "Met (" + judged.label() + ")"));
    List<List<String>> rows = new ArrayList<>();
    Map<String, Object> data = new LinkedHashMap<>();
    for (String process : List.of("inventory-service", "order-service", "gateway", STACK)) {
      long target = process.equals(STACK) ? STACK_TARGET_MS : ALONE_TARGET_MS;
      List<String> row = new ArrayList<>(List.of(process.equals(STACK) ? STACK : process + " alone"));
      Map<String, Object> processData = new LinkedHashMap<>();
      for (Jvm jvm : jvms) {
        List<Long> ms = runs.get(jvm.key()).get(process);
        row.add(median(ms) + " " + ms);
        processData.put(jvm.key() + "_ms", ms);
      }
      if (!aotMeasured) {
        row.add("not measured");
      }
      long judgedMedian = median(runs.get(judged.key()).get(process));
      row.addAll(List.of("< " + target, judgedMedian < target ? "yes" : "**no**"));
      rows.add(row);
      processData.put("target_ms", target);
      processData.put("judged_on", judged.key());
      data.put(process, processData);
    }
    List<String> jarHeaders = new ArrayList<>(List.of("Jar"));
    List<Jvm> trainedJvms = jvms.stream().filter(jvm -> !jvm.trained().isEmpty()).toList();
    trainedJvms.forEach(jvm -> jarHeaders.addAll(List.of(jvm.label() + ": training run (ms)", "size (MiB)")));
    jvms.forEach(jvm -> jarHeaders.add("RSS " + jvm.label()));
    List<List<String>> jarRows = new ArrayList<>();
    for (String module : PROCESSES) {
      List<String> row = new ArrayList<>(List.of(module));
      Map<String, Object> jarData = new LinkedHashMap<>();
      for (Jvm jvm : trainedJvms) {
        Trained t = jvm.trained().get(module);
        row.addAll(List.of(Long.toString(t.trainingMs()), String.format(Locale.ROOT, "%.1f", t.bytes() / (1024.0 * 1024.0))));
        jarData.put(jvm.key() + "_training_ms", t.trainingMs());
        jarData.put(jvm.key() + "_bytes", t.bytes());
      }
      for (Jvm jvm : jvms) {
        List<Long> mib = rss.get(jvm.key()).get(module);
        row.add(Long.toString(median(mib)));
        jarData.put(jvm.key() + "_rss_mib", mib);
      }
      jarRows.add(row);
      data.put(module + "_jar", jarData);
    }
    Map<String, String> versions = new LinkedHashMap<>();
    jvms.forEach(jvm -> versions.put(jvm.key(), StartUpJvms.vm(jvm.version())));
    data.put("jvms", versions);
    Set<String> which = new LinkedHashSet<>();
    jvms.forEach(jvm -> which.add(jvm.label().replace(" + CDS archive", "").replace(" + AOT cache", "") + " is "
        + StartUpJvms.vm(jvm.version())));
    report.heading("5. Start-up")
        .paragraph("From launching the JVM (`java -Xmx256m @deploy/jvm.options -jar …`) to its gRPC health check answering SERVING, on "
            + "each JVM side by side: the benchmark's own without and with the class-data-sharing archive "
            + "(`-XX:SharedArchiveFile`, as `run.sh` makes it on JDK 17), and a JDK 25 without and with the AOT cache "
            + "(`-XX:AOTCache`, as the image and `run.sh` make it there), each made by each jar's `train-cds` run with "
            + "the JVM that uses it. Each process alone: the table already there and not checked (`TABLE_AUTO_CREATE` "
            + "unset, as in production), what it calls already serving. The whole stack as compose starts it: both "
            + "services at once, the gateway once they serve, timed from the first launch to the gateway serving. "
            + "run.sh's settings: the services over mutual TLS, the gateway checking JWTs and calling them over "
            + "mutual TLS. Median of " + n + " starts, in ms; the JVMs take turns, in an order turned by one each "
            + "round. The targets are the issue's, on this 2-core machine, judged on " + judged.label()
            + (aotMeasured ? ", as the image starts." : ": no JDK 25 was given (`--java25 PATH` or `JAVA25_HOME`; "
                + "`bench.sh` finds one as `run.sh` does), so its columns were not measured.")
            + " " + String.join("; ", which) + ".")
        .table(headers, rows)
        .paragraph("The archives and caches (one per jar and JVM, made once per build by the JVM that uses them), "
            + "and each process's resident memory a second after it serves alone (median, MiB):")
        .table(jarHeaders, jarRows)
        .paragraph("What the start does, and what was moved off it: "
            + "[performance-log.md](performance-log.md#start-up-class-data-sharing-and-lazy-work-issue-23); the "
            + "move to JDK 25's AOT cache: [performance-log.md](performance-log.md#start-up-jdk-25s-aot-cache-issue-33); "
            + "Netty with Unsafe, the key check aside and the JIT's longer wait: [performance-log.md]"
            + "(performance-log.md#start-up-netty-keeps-unsafe-the-key-check-moves-aside-the-jit-waits-issue-33).")
        .data("startup", data);
  }

  static long median(List<Long> runs) {
    List<Long> sorted = runs.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }
}
