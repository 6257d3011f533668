package dev.warehouse.bench;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.scenario.BuyingStock;
import dev.warehouse.bench.scenario.CallerQuotas;
import dev.warehouse.bench.scenario.CapacityCost;
import dev.warehouse.bench.scenario.CostFlatness;
import dev.warehouse.bench.scenario.FlashSale;
import dev.warehouse.bench.scenario.LayerOverhead;
import dev.warehouse.bench.scenario.ProxyComparison;
import dev.warehouse.bench.scenario.SecurityCost;
import dev.warehouse.bench.scenario.Settings;
import dev.warehouse.bench.scenario.StartUp;
import dev.warehouse.bench.scenario.SustainedLoad;
import dev.warehouse.bench.scenario.TracingCost;
import dev.warehouse.bench.scenario.overload.Overload;
import dev.warehouse.bench.scenario.writeshards.WriteShards;
import dev.warehouse.bench.stack.Jars;
import dev.warehouse.bench.stack.Nginx;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.standin.StandInBackend;
import dev.warehouse.bench.standin.StandInDynamo;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.runtime.process.JvmSetup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * Runs every scenario against the system it starts itself, and writes the report:
 * {@code java -jar bench/target/bench.jar [--quick] [--only 1,2,3,4,5,6,7,8,9,10,11,12,13] [--out docs/benchmarks.md]
 * [--json target/benchmarks.json] [--baseline DIR] [--java25 PATH]} (see {@code bench.sh}); {@code --only 1s} runs only
 * the stand-in half of scenario 1. {@code --java25 PATH} (or {@code JAVA25_HOME}): a JDK 25 or later, its directory or
 * its java, on which scenario 5 also starts the jars from their AOT caches. {@code --baseline DIR}: scenario 9 also measures PlaceOrder of the build whose jars DIR holds
 * ({@code MODULE/target/MODULE.jar}, as an older checkout built, or flat {@code MODULE.jar}) against this one's.
 * The JSON, for tools, goes under {@code target/} (ignored by git): only the Markdown report is committed. Scenario 8 also writes its
 * table into {@code operations.md} beside the report, between its markers.
 * {@code java -jar bench.jar standin PORT} serves the stand-in backend of the proxy comparison.
 */
public final class BenchMain {

  static {
    JvmSetup.configureLogging();
  }

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 1 && args[0].equals("standin")) {
      StandInBackend.main(new String[] {args[1]});
      return;
    }
    boolean quick = List.of(args).contains("--quick");
    int onlyAt = List.of(args).indexOf("--only");
    List<String> only = onlyAt >= 0 ? List.of(args[onlyAt + 1].split(",")) : List.of("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13");
    int out = List.of(args).indexOf("--out");
    Path root = Path.of(System.getProperty("project.root", ".")).toAbsolutePath().normalize();
    Path markdown = root.resolve(out >= 0 ? args[out + 1] : "docs/benchmarks.md");
    int jsonAt = List.of(args).indexOf("--json");
    Path json = root.resolve(jsonAt >= 0 ? args[jsonAt + 1] : "target/benchmarks.json");
    int baselineAt = List.of(args).indexOf("--baseline");
    // Checked before any scenario runs: a wrong folder found after twenty minutes of them would waste the run.
    Optional<Jars> baseline = baselineAt >= 0 ? Optional.of(Jars.baseline(root.resolve(args[baselineAt + 1])))
        : Optional.empty();
    if (baseline.isPresent() && !only.contains("9")) {
      log("--baseline is for scenario 9 only, which this run leaves out");
    }
    // Scenario 5's JDK 25, checked before any scenario runs as well; without one its columns say not measured.
    int java25At = List.of(args).indexOf("--java25");
    Optional<Path> java25 = only.contains("5") ? StartUp.java25(
        java25At >= 0 ? Optional.of(args[java25At + 1]) : Optional.empty(),
        Optional.ofNullable(System.getenv("JAVA25_HOME"))) : Optional.empty();
    Settings settings = quick ? Settings.quick() : Settings.full();
    Instant started = Instant.now();
    Report report = new Report();

    if (only.contains("1s")) {
      layersOnStandIn(root, settings, report);
    }
    if (only.contains("1") || only.contains("3")) {
      log("scenario 1 (layer overhead) and 3 (cost flatness)");
      try (Stack stack = Stack.start(root, "bench-" + UUID.randomUUID());
          DynamoDbAsyncClient dynamo = Stack.client(stack.dynamoEndpoint)) {
        DataSet data = new DataSet(settings.dataItems());
        data.load(dynamo, stack.table);
        if (only.contains("1")) {
          LayerOverhead.onEmulator(stack, data, dynamo, settings, report);
        }
        if (only.contains("3")) {
          log("scenario 3 (cost flatness)");
          CostFlatness.run(dynamo, settings, report);
        }
      }
    }
    if (only.contains("1")) {
      // After the emulator's stack has stopped: its idle JVMs still compiled and collected for a while.
      layersOnStandIn(root, settings, report);
    }
    if (only.contains("4")) {
      log("scenario 4 (sustained load, " + settings.sustained().toSeconds() + " s)");
      try (Stack stack = Stack.start(root, "bench-" + UUID.randomUUID());
          DynamoDbAsyncClient dynamo = Stack.client(stack.dynamoEndpoint)) {
        DataSet data = new DataSet(settings.dataItems());
        data.load(dynamo, stack.table);
        SustainedLoad.run(stack, data, settings, report);
      }
    }
    if (only.contains("5")) {
      log("scenario 5 (start-up: this JVM without and with the class-data-sharing archive, "
          + java25.map(j -> j + " without and with the AOT cache)").orElse("no JDK 25 given)"));
      StartUp.run(root, settings, report, java25);
    }
    if (only.contains("2")) {
      log("scenario 2 (gateway against nginx)");
      ProxyComparison.run(root, settings, report);
    }
    if (only.contains("6")) {
      log("scenario 6 (write shards and hot keys)");
      WriteShards.run(root, settings, report);
    }
    if (only.contains("7")) {
      log("scenario 7 (what security costs per call)");
      SecurityCost.run(root, settings, report);
    }

    if (only.contains("8")) {
      log("scenario 8 (capacity and cost per call)");
      try (Stack stack = Stack.start(root, "bench-" + UUID.randomUUID());
          DynamoDbAsyncClient dynamo = Stack.client(stack.dynamoEndpoint)) {
        DataSet data = new DataSet(settings.dataItems());
        data.load(dynamo, stack.table);
        Path operations = markdown.resolveSibling("operations.md");
        CapacityCost.run(stack, data, settings, report, operations);
        log("wrote the capacity table into " + operations);
      }
    }

    if (only.contains("9")) {
      log("scenario 9 (buying stock)");
      BuyingStock.run(root, settings, report, baseline);
    }

    if (only.contains("10")) {
      log("scenario 10 (overload)");
      Overload.run(root, settings, report);
    }

    if (only.contains("11")) {
      log("scenario 11 (a flash sale: one product in 1, 4 and 16 buckets)");
      FlashSale.run(root, settings, report);
    }

    if (only.contains("12")) {
      log("scenario 12 (quotas per caller, and a cold burst)");
      CallerQuotas.run(root, settings, report);
    }

    if (only.contains("13")) {
      log("scenario 13 (what tracing costs per call)");
      TracingCost.run(root, settings, report);
    }

    Duration took = Duration.between(started, Instant.now());
    report.data("took_seconds", took.toSeconds());
    report.write(markdown, json, preamble(root, took, quick));
    log("wrote " + markdown + " and " + json + " in " + took.toSeconds() + " s");
  }

  private static void layersOnStandIn(Path root, Settings settings, Report report) throws Exception {
    log("scenario 1 on a stand-in DynamoDB");
    String table = "bench-" + UUID.randomUUID();
    try (StandInDynamo standIn = StandInDynamo.start(table);
        Stack stack = Stack.on(root, table, standIn.endpoint());
        DynamoDbAsyncClient direct = Stack.client(standIn.endpoint());
        Nginx nginx = Nginx.start(root.resolve("target/bench-nginx-layers"), Map.of(
            "/" + InventoryServiceGrpc.SERVICE_NAME + "/", stack.inventory.grpcPort,
            "/" + OrderServiceGrpc.SERVICE_NAME + "/", stack.orders.grpcPort))) {
      LayerOverhead.onStandIn(stack, new DataSet(settings.dataItems()), direct, nginx, settings, report);
    }
  }

  private static String preamble(Path root, Duration took, boolean quick) throws IOException {
    return "# Benchmarks\n\n"
        + "Written by the benchmark tool (`bench` module) on " + Instant.now().toString().substring(0, 10)
        + (quick ? " in **quick (smoke) mode: these numbers are not the real run**" : "") + ". "
        + "It starts what it measures itself (moto through our launcher, the services and the gateway from "
        + "their jars, a stand-in backend and nginx), runs every scenario, and wrote this file in "
        + took.toMinutes() + " min " + took.toSecondsPart() + " s.\n\n"
        + "## Reproduce\n\n```sh\n./bench.sh            # builds the jars, then runs every scenario (about 25 min)\n"
        + "./bench.sh --quick    # a five-minute smoke run of the same tool\n"
        + "./bench.sh --only 9 --baseline DIR --out target/bench-9.md   # PlaceOrder against an older build, in one run\n"
        + "```\n\n"
        + BASELINE_NOTE + "\n\n"
        + "## Machine\n\n" + machine() + "\n"
        + "Small and noisy machines: numbers are medians of repeated runs, and ratios are measured side by side "
        + "in one run. Timing targets live here, never in unit tests. The decisions these numbers led to, with "
        + "the measurements behind them: [performance-log.md](performance-log.md).\n";
  }

  /** How to build a baseline for {@code --baseline}: in the report's Reproduce section. */
  static final String BASELINE_NOTE = "`--baseline DIR`: DIR is another checkout built with `./mvnw -B -q -DskipTests "
      + "package` (its `*/target/*.jar`) or a folder of `inventory-service.jar`, `order-service.jar` and `gateway.jar`; "
      + "scenario 9 then measures PlaceOrder of both builds interleaved, each on a stack of its own, and new/old.";

  private static String machine() throws IOException {
    String cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
        .findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("?");
    String mem = Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal"))
        .findFirst().map(l -> Long.parseLong(l.replaceAll("[^0-9]", "")) / (1024 * 1024) + " GiB").orElse("?");
    return "| | |\n|---|---|\n"
        + "| CPU | " + Runtime.getRuntime().availableProcessors() + " cores, " + cpu + " |\n"
        + "| Memory | " + mem + " |\n"
        + "| Java | " + System.getProperty("java.vm.name") + " " + System.getProperty("java.version") + " |\n"
        + "| DynamoDB | moto " + command("python3", "-c", "import moto; print(moto.__version__)") + " through our serializing launcher (lenient: the strict mode checks behaviour, not speed) |\n"
        + "| OS | " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " |\n";
  }

  private static String command(String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes()).trim();
      p.waitFor();
      return out;
    } catch (Exception e) {
      return "?";
    }
  }

  private static void log(String message) {
    System.out.println(Instant.now().toString().substring(11, 19) + " bench: " + message);
  }
}
