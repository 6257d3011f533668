package dev.warehouse.bench.scenario;

import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.runtime.dynamo.TableSetup;
import dev.warehouse.runtime.moto.MotoProcess;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * Scenario 5: start-up, from launching a JVM ({@code java -Xmx256m -jar …}) to its gRPC health check answering
 * SERVING, without and with the class-data-sharing archive that {@code run.sh} and the image make (each jar's
 * {@code train-cds} run, trained here by the same JVM that runs them).
 *
 * <p>Each process alone: the table already exists and is not checked ({@code TABLE_AUTO_CREATE} unset, as in
 * production: creating or checking it when asked is not start-up), and what it calls is already serving. Then
 * the whole stack, started as compose starts it: both services at once, the gateway once they serve. Every
 * process runs with run.sh's settings: the services over mutual TLS, the gateway checking JWTs and calling
 * them over mutual TLS. Runs without and with the archive alternate, first one and then the other, so that a
 * slow stretch of the machine falls on both; one unmeasured start of each process before them warms the page
 * cache and this tool's own health-check client.
 */
public final class StartUp {

  /** The targets on this 2-core machine: each process healthy in under 1 s alone, the stack in under 3 s. */
  static final long ALONE_TARGET_MS = 1_000;
  static final long STACK_TARGET_MS = 3_000;
  static final List<String> PROCESSES = List.of("inventory-service", "order-service", "gateway");
  static final String STACK = "whole stack";
  static final String WITHOUT = "without archive";
  static final String WITH = "with archive";
  private static final String GATEWAY_ID = "spiffe://warehouse.local/gateway";
  private static final long TIMEOUT_MS = 120_000;
  /** When resident memory is read after SERVING: the JVM's metrics are bound by then, the start's garbage not yet collected. */
  private static final long RSS_AFTER_MS = 1_000;

  /** One start alone: milliseconds to SERVING, and resident bytes a second later. */
  record Start(long ms, long rssBytes) {}

  private StartUp() {}

  public static void run(Path root, Settings settings, Report report) throws Exception {
    Path work = root.resolve("target/bench-startup");
    Path logs = root.resolve("target/bench-logs");
    Path certs = work.resolve("certs");
    Path tokens = work.resolve("tokens");
    Path policy = root.resolve("deploy/auth/policy.dev.yaml");
    SecurityCost.devKit(root, work, "certs", certs.toString());
    SecurityCost.devKit(root, work, "dev-tokens", tokens.toString(), policy.toString());
    ChannelCredentials clientCert = TlsChannelCredentials.newBuilder().trustManager(certs.resolve("ca.pem").toFile())
        .keyManager(certs.resolve("client.pem").toFile(), certs.resolve("client-key.pem").toFile()).build();

    Map<String, Archive> archives = new LinkedHashMap<>();
    for (String module : PROCESSES) {
      archives.put(module, Archive.train(root, work, module));
    }

    String table = "bench-" + UUID.randomUUID();
    int n = settings.startupRuns();
    Map<String, Map<String, List<Long>>> runs = new LinkedHashMap<>();
    Map<String, Map<String, List<Long>>> rss = new LinkedHashMap<>();
    try (MotoProcess moto = Stack.startMoto(root);
        DynamoDbAsyncClient dynamo = Stack.client(moto.endpoint())) {
      TableSetup.ensureTable(dynamo, table, Duration.ofMinutes(2));
      Launcher launcher = new Launcher(root, logs, certs, tokens, policy, clientCert, archives,
          baseEnv(moto.endpoint(), table));

      // Alone: each process with what it calls already serving (the order-service holds stock at the
      // inventory, the gateway forwards to both), so that nothing it waits for is counted.
      aloneRuns(runs, rss, launcher, "inventory-service", Map.of(), n);
      try (Proc inventory = launcher.start("inventory-service", "inventory-dependency", WITH, Map.of())) {
        launcher.await(inventory);
        Map<String, String> toInventory = Map.of("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort);
        aloneRuns(runs, rss, launcher, "order-service", toInventory, n);
        try (Proc orders = launcher.start("order-service", "order-dependency", WITH, toInventory)) {
          launcher.await(orders);
          aloneRuns(runs, rss, launcher, "gateway", Map.of("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort,
              "ORDER_ADDRESSES", "127.0.0.1:" + orders.grpcPort), n);
        }
      }

      stack(launcher, WITHOUT); // unmeasured, as the first start of each process above
      for (int i = 0; i < n; i++) {
        for (String mode : order(i)) {
          runs.computeIfAbsent(mode, m -> new LinkedHashMap<>()).computeIfAbsent(STACK, p -> new ArrayList<>())
              .add(stack(launcher, mode));
        }
      }
    }
    write(report, runs, rss, archives, n);
  }

  private static void aloneRuns(Map<String, Map<String, List<Long>>> runs, Map<String, Map<String, List<Long>>> rss,
      Launcher launcher, String module, Map<String, String> env, int n) throws Exception {
    launcher.alone(module, WITHOUT, env); // unmeasured
    for (int i = 0; i < n; i++) {
      for (String mode : order(i)) {
        Start start = launcher.alone(module, mode, env);
        runs.computeIfAbsent(mode, m -> new LinkedHashMap<>()).computeIfAbsent(module, p -> new ArrayList<>())
            .add(start.ms());
        rss.computeIfAbsent(mode, m -> new LinkedHashMap<>()).computeIfAbsent(module, p -> new ArrayList<>())
            .add(start.rssBytes() >> 20);
      }
    }
  }

  /** Without first in even rounds, with first in odd ones. */
  private static List<String> order(int round) {
    return round % 2 == 0 ? List.of(WITHOUT, WITH) : List.of(WITH, WITHOUT);
  }

  /** Milliseconds from the first launch to the gateway's SERVING: the services together, the gateway once they serve. */
  private static long stack(Launcher launcher, String mode) throws Exception {
    long launched = System.nanoTime();
    try (Proc inventory = launcher.start("inventory-service", "stack-inventory-service", mode, Map.of());
        Proc orders = launcher.start("order-service", "stack-order-service", mode,
            Map.of("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort))) {
      launcher.await(inventory);
      launcher.await(orders);
      try (Proc gateway = launcher.start("gateway", "stack-gateway", mode, Map.of(
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

  /** A jar's archive as this scenario trained it: where, how long the training run took, and its size. */
  record Archive(Path file, long trainingMs, long bytes) {

    static Archive train(Path root, Path work, String module) throws IOException, InterruptedException {
      Files.createDirectories(work);
      Path file = work.resolve(module + ".jsa");
      Files.deleteIfExists(file);
      Path jar = root.resolve(module).resolve("target").resolve(module + ".jar");
      long started = System.nanoTime();
      Process process = new ProcessBuilder(java(), "-XX:ArchiveClassesAtExit=" + file, "-jar", jar.toString(),
          "train-cds").redirectErrorStream(true).redirectOutput(work.resolve(module + "-train-cds.log").toFile()).start();
      if (!process.waitFor(5, TimeUnit.MINUTES) || process.exitValue() != 0 || !Files.exists(file)) {
        process.destroyForcibly();
        throw new IllegalStateException(module + ".jar train-cds made no archive; see "
            + work.resolve(module + "-train-cds.log"));
      }
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      // -Xshare:auto would start without an archive it cannot use and measure nothing: make sure it maps.
      Process check = new ProcessBuilder(java(), "-XX:SharedArchiveFile=" + file, "-Xshare:on", "-cp", jar.toString(),
          "-version").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!check.waitFor(1, TimeUnit.MINUTES) || check.exitValue() != 0) {
        throw new IllegalStateException("the JVM does not use " + file + " with " + jar);
      }
      return new Archive(file, ms, Files.size(file));
    }

    List<String> flags() {
      return List.of("-XX:SharedArchiveFile=" + file, "-Xshare:auto");
    }
  }

  /** Starts one process of the stack with run.sh's settings, without or with its archive. */
  private record Launcher(Path root, Path logs, Path certs, Path tokens, Path policy, ChannelCredentials clientCert,
      Map<String, Archive> archives, Map<String, String> baseEnv) {

    Proc start(String module, String name, String mode, Map<String, String> extra) throws IOException {
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
      List<String> flags = mode.equals(WITH) ? archives.get(module).flags() : List.of();
      return Stack.java(root, logs, module, name, env, flags);
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
    Start alone(String module, String mode, Map<String, String> extra) throws Exception {
      for (int attempt = 1; ; attempt++) {
        try (Proc proc = start(module, module + "-alone", mode, extra)) {
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

  private static void write(Report report, Map<String, Map<String, List<Long>>> runs,
      Map<String, Map<String, List<Long>>> rss, Map<String, Archive> archives, int n) {
    List<List<String>> rows = new ArrayList<>();
    Map<String, Object> data = new LinkedHashMap<>();
    for (String process : List.of("inventory-service", "order-service", "gateway", STACK)) {
      List<Long> without = runs.get(WITHOUT).get(process);
      List<Long> with = runs.get(WITH).get(process);
      long target = process.equals(STACK) ? STACK_TARGET_MS : ALONE_TARGET_MS;
      rows.add(List.of(process.equals(STACK) ? STACK : process + " alone", median(without) + " " + without,
          median(with) + " " + with, "< " + target, median(with) < target ? "yes" : "**no**"));
      data.put(process, Map.of("without_archive_ms", without, "with_archive_ms", with, "target_ms", target));
    }
    List<List<String>> archiveRows = new ArrayList<>();
    archives.forEach((module, archive) -> {
      List<Long> without = rss.get(WITHOUT).get(module);
      List<Long> with = rss.get(WITH).get(module);
      archiveRows.add(List.of(module, Long.toString(archive.trainingMs()),
          String.format(Locale.ROOT, "%.1f", archive.bytes() / (1024.0 * 1024.0)), median(without) + " " + without,
          median(with) + " " + with));
      data.put(module + "_archive", Map.of("training_ms", archive.trainingMs(), "bytes", archive.bytes(),
          "rss_mib_without", without, "rss_mib_with", with));
    });
    report.heading("5. Start-up")
        .paragraph("From launching the JVM (`java -Xmx256m -jar …`) to its gRPC health check answering SERVING, "
            + "without and with the class-data-sharing archive (`-XX:SharedArchiveFile`, made by each jar's "
            + "`train-cds` run as `run.sh` and the image make it). Each process alone: the table already there and "
            + "not checked (`TABLE_AUTO_CREATE` unset, as in production), what it calls already serving. The whole "
            + "stack as compose starts it: both services at once, the gateway once they serve, timed from the first "
            + "launch to the gateway serving. run.sh's settings: the services over mutual TLS, the gateway checking "
            + "JWTs and calling them over mutual TLS. Median of " + n + " starts, in ms; runs without and with the "
            + "archive alternate. The targets are the issue's, on this 2-core machine; met is judged with the archive.")
        .table(List.of("Process", "Without archive: median [runs]", "With archive: median [runs]", "Target (ms)", "Met"),
            rows)
        .paragraph("The archives (one per jar, made once per build by the JVM that uses them), and each process's "
            + "resident memory a second after it serves alone, without and with its archive (median [runs], MiB):")
        .table(List.of("Jar", "Training run (ms)", "Archive (MiB)", "RSS without", "RSS with"), archiveRows)
        .paragraph("What the start does, and what was moved off it: "
            + "[performance-log.md](performance-log.md#start-up-class-data-sharing-and-lazy-work-issue-23).")
        .data("startup", data);
  }

  static long median(List<Long> runs) {
    List<Long> sorted = runs.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
