package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import com.sun.net.httpserver.HttpServer;
import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.MachineCpu;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Processes;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.standin.StandInDynamo;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.GrpcTargets;
import dev.warehouse.bench.target.Target;
import dev.warehouse.bench.target.Target.Op;
import io.grpc.InsecureChannelCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 13: what tracing costs per call. Three stacks (gateway, inventory-service, order-service, each its own
 * JVM) on the stand-in DynamoDB differ only in their {@code OTEL_*} settings: tracing off (the default: ids only),
 * 1 % of traces sampled at the gateway, and all of them; the sampled spans go over OTLP/HTTP to a receiver in the
 * tool that reads and drops them. The three take turns in one open-loop schedule, as in scenario 7.
 */
public final class TracingCost {

  private static final String TITLE = "13. What tracing costs per call";
  private static final List<Op> OPS = List.of(Op.GET_PRODUCT_INVENTORY, Op.LIST_CUSTOMER_ORDERS, Op.PLACE_ORDER);
  static final String OFF = "off";
  /** The same as {@link #OFF} in JVMs of its own: how far two identical stacks differ, the noise a cost is read against. */
  static final String OFF_AGAIN = "off, second stack";
  static final String ONE_PERCENT = "1 % sampled";
  static final String ALL = "100 % sampled";
  private static final Map<String, String> RATIO = Map.of(ONE_PERCENT, "0.01", ALL, "1.0");
  private static final int SOAK_ROUNDS = 6;

  private TracingCost() {}

  public static void run(Path root, Settings settings, Report report) throws Exception {
    String table = "bench-" + UUID.randomUUID();
    AtomicLong exports = new AtomicLong();
    AtomicLong exportedBytes = new AtomicLong();
    HttpServer receiver = otlpReceiver(exports, exportedBytes);
    try (StandInDynamo standIn = StandInDynamo.start(table); Processes processes = new Processes(root);
        GrpcTargets targets = new GrpcTargets()) {
      Map<String, List<Proc>> stacks = new LinkedHashMap<>();
      for (String layer : List.of(OFF, OFF_AGAIN, ONE_PERCENT, ALL)) {
        Map<String, String> tracing = !RATIO.containsKey(layer) ? Map.of() : Map.of("OTEL_TRACES_EXPORTER", "otlp",
            "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + receiver.getAddress().getPort(),
            "OTEL_TRACES_SAMPLER", "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG", RATIO.get(layer));
        String tag = layer.replaceAll("[^a-z0-9]+", "-");
        Map<String, String> service = new LinkedHashMap<>(Stack.serviceEnv(standIn.endpoint(), table));
        service.putAll(tracing);
        Proc inventory = processes.start("inventory-service", "inventory-tracing-" + tag, service);
        Map<String, String> orderEnv = new LinkedHashMap<>(service);
        orderEnv.put("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort);
        Proc orders = processes.start("order-service", "order-tracing-" + tag, orderEnv);
        inventory.awaitServing(120_000);
        orders.awaitServing(120_000);
        Map<String, String> gatewayEnv = new LinkedHashMap<>(tracing);
        gatewayEnv.putAll(Map.of("INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort,
            "ORDER_ADDRESSES", "127.0.0.1:" + orders.grpcPort, "AUTH_MODE", "none"));
        Proc gateway = processes.start("gateway", "gateway-tracing-" + tag, gatewayEnv);
        gateway.awaitServing(120_000);
        stacks.put(layer, List.of(gateway, orders, inventory));
      }
      DataSet data = new DataSet(settings.dataItems());
      for (String layer : stacks.keySet()) {
        String address = "127.0.0.1:" + stacks.get(layer).get(0).grpcPort;
        targets.add(new GrpcTarget(layer, address, address, data, InsecureChannelCredentials.create(), List.of()));
      }
      measure(targets.byLayer(), stacks, settings, report, exports, exportedBytes);
    } finally {
      receiver.stop(0);
    }
  }

  private static void measure(Map<String, Target> targets, Map<String, List<Proc>> stacks, Settings settings,
      Report report, AtomicLong exports, AtomicLong exportedBytes) throws Exception {
    Duration warmup = settings.standInMeasure().dividedBy(6);
    // Twelve JVMs compiling on 2 cores (scenario 7): a closed loop on each stack, uncounted rounds at the measured
    // rate, then a wait for a quiet machine, before the counted rounds.
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, 1);
    for (Target target : targets.values()) {
      for (Op op : OPS) {
        ClosedLoop.run("warm-up", target.call(op, i -> keys.next()), SideBySide.CLOSED_LOOP_CALLERS, Duration.ZERO,
            settings.standInMeasure().multipliedBy(8));
      }
    }
    SideBySide.measure(targets, OPS, settings.securityRate(), SOAK_ROUNDS, Duration.ZERO, settings.standInMeasure());
    double quiet = MachineCpu.awaitQuiet(SecurityCost.QUIET_SHARE, SecurityCost.QUIET_LIMIT);
    SideBySide.warmUp(targets, OPS, settings.securityRate(), settings.standInMeasure());
    MachineCpu machineBefore = MachineCpu.read();
    Map<String, Double> cpuBefore = cpuSeconds(stacks);
    long exportsBefore = exports.get();
    long bytesBefore = exportedBytes.get();
    SideBySide.Rounds runs = SideBySide.measure(targets, OPS, settings.securityRate(), settings.standInRounds(), warmup,
        settings.standInMeasure());
    double busy = MachineCpu.read().busySince(machineBefore);
    Map<String, Double> cpu = cpuSeconds(stacks);
    cpu.replaceAll((layer, seconds) -> seconds - cpuBefore.get(layer));

    List<String> layers = List.copyOf(targets.keySet());
    Map<String, Double> cpuMicros = new LinkedHashMap<>();
    layers.forEach(layer -> cpuMicros.put(layer, cpu.get(layer) / runs.requests(layer) * 1e6));
    List<String> headers = new ArrayList<>(List.of("Operation"));
    headers.addAll(layers);
    List<List<String>> rows = new ArrayList<>();
    Map<String, Double> worstAddedShare = new LinkedHashMap<>();
    List<Map<String, Object>> json = new ArrayList<>();
    for (Op op : OPS) {
      Map<String, Double> p50 = new LinkedHashMap<>();
      runs.summaries.get(op).forEach((layer, rounds) -> p50.put(layer, Medians.of(rounds, Summary::p50)));
      Map<String, Double> p99 = SideBySide.percentile(runs.byOp.get(op), 99);
      List<String> row = new ArrayList<>(List.of(op.toString()));
      layers.forEach(layer -> row.add(ms(p50.get(layer)) + " / " + ms(p99.get(layer))));
      rows.add(row);
      for (String layer : layers.subList(1, layers.size())) {
        worstAddedShare.merge(layer, p50.get(layer) / p50.get(OFF) - 1, Math::max);
      }
      json.add(Map.of("op", op.toString(), "p50_median_of_rounds_ms", p50, "p99_pooled_ms", p99));
    }
    Map<String, Double> allP50 = SideBySide.percentile(runs.all, 50);
    Map<String, Double> allP99 = SideBySide.percentile(runs.all, 99);
    List<String> all = new ArrayList<>(List.of("**All operations**"));
    layers.forEach(layer -> all.add(ms(allP50.get(layer)) + " / " + ms(allP99.get(layer))));
    rows.add(all);

    List<List<String>> costs = new ArrayList<>();
    for (String layer : layers) {
      boolean base = layer.equals(OFF);
      double cpuShare = cpuMicros.get(layer) / cpuMicros.get(OFF) - 1;
      double p50Share = allP50.get(layer) / allP50.get(OFF) - 1;
      String verdict = !layer.equals(ONE_PERCENT) ? "—"
          : (p50Share <= 0.05 && cpuShare <= 0.05 ? "met" : "**not met**");
      costs.add(List.of(layer, num(cpuMicros.get(layer)),
          base ? "—" : pct(cpuShare), base ? "—" : pct(p50Share) + " (worst op " + pct(worstAddedShare.get(layer)) + ")",
          verdict, Long.toString(runs.errors(layer))));
    }
    long perLayer = runs.all.get(OFF).getTotalCount();
    report.heading(TITLE)
        .paragraph("The same calls through four stacks (a gateway, an inventory-service and an order-service each, "
            + "every one its own JVM, on the stand-in DynamoDB of section 1) that differ in their `OTEL_*` settings "
            + "only: **" + OFF + "**, the default (no span recorded; each call still gets a trace id, passed on and "
            + "logged), twice (**" + OFF_AGAIN + "**, the same settings in JVMs of their own: how far two identical "
            + "stacks differ is the noise the costs are read against); **" + ONE_PERCENT + "** (`OTEL_TRACES_SAMPLER=parentbased_traceidratio`, `0.01`: decided at "
            + "the gateway, followed by the services); **" + ALL + "**. Sampled spans go over OTLP/HTTP "
            + "(`OTEL_TRACES_EXPORTER=otlp`, batched as the SDK does by default) to a receiver in the tool that reads "
            + "and drops them: " + (exports.get() - exportsBefore) + " exports, "
            + num((exportedBytes.get() - bytesBefore) / 1024.0) + " KiB during the counted rounds. A PlaceOrder "
            + "through the traced stack is 13 spans (section Traces of observability.md). The four take turns in "
            + "one open-loop schedule, " + (int) settings.securityRate() + " requests/s each (PlaceOrder at a sixth), "
            + "same keys, " + settings.standInMeasure().toMillis() + " ms per operation and round after "
            + warmup.toMillis() + " ms of warm-up, " + settings.standInRounds() + " rounds (p50: median of the "
            + "rounds'; p99: over the rounds' calls together, " + perLayer + " per stack), after a closed-loop "
            + "warm-up of each stack, " + SOAK_ROUNDS + " uncounted rounds, and a wait for a quiet machine ("
            + Math.round(quiet * 100) + " % busy at its end). Latency in ms, p50 / p99:")
        .table(headers, rows)
        .table(List.of("Stack", "CPU per call, all three processes (µs)", "CPU added", "p50 added, all calls",
            "Target at 1 %: ≤ 5 % more p50 and CPU per call", "Errors"), costs)
        .paragraph("CPU per call is the three processes' user and system time during the counted rounds (from "
            + "/proc) over the calls their gateway was sent. The machine was busy " + Math.round(busy * 100)
            + " % of the time (2 cores for the load generator and twelve JVMs), so a p99 carries scheduling noise; "
            + "the second stack without tracing shows how far two stacks differ with nothing between them.")
        .data("tracing_cost_standin", json)
        .data("tracing_cost_cpu_us_per_call", cpuMicros)
        .data("tracing_cost_machine_busy_share", busy);
  }

  private static String pct(double share) {
    return String.format(java.util.Locale.ROOT, "%+.1f %%", share * 100);
  }

  /** An OTLP/HTTP receiver for traces that reads each export and answers an empty ExportTraceServiceResponse. */
  private static HttpServer otlpReceiver(AtomicLong exports, AtomicLong bytes) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.createContext("/v1/traces", exchange -> {
      try (exchange; InputStream body = exchange.getRequestBody()) {
        bytes.addAndGet(body.transferTo(java.io.OutputStream.nullOutputStream()));
        exports.incrementAndGet();
        exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
        exchange.sendResponseHeaders(200, -1);
      }
    });
    server.start();
    return server;
  }

  /** CPU seconds so far of each stack's three processes together. */
  private static Map<String, Double> cpuSeconds(Map<String, List<Proc>> stacks) {
    Map<String, Double> seconds = new LinkedHashMap<>();
    stacks.forEach((layer, procs) -> seconds.put(layer, procs.stream().mapToDouble(Proc::cpuSeconds).sum()));
    return seconds;
  }
}
