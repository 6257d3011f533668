package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.Call;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.load.OpenLoop;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.MachineCpu;
import dev.warehouse.bench.stack.Nginx;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.DynamoTarget;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.Target;
import dev.warehouse.bench.target.Target.Op;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * Scenario 1: each access pattern and PlaceOrder at a moderate fixed rate, straight to DynamoDB,
 * to the service, and through the gateway, side by side in one run: the latency each hop adds. Run
 * twice: on the emulator, where its own cost and jitter swamp the layers (and show how much of each
 * request it takes), and on a stand-in DynamoDB endpoint with canned answers, which resolves the
 * layers' sub-millisecond targets.
 */
public final class LayerOverhead {

  private static final List<Op> OPS = List.of(Op.A1, Op.A2, Op.A3, Op.A4, Op.A5, Op.A6, Op.PLACE_ORDER);
  private static final String TITLE = "1. Layer overhead";
  private static final int MAX_WARM_UP_ROUNDS = 6;
  private static final int CLOSED_LOOP_CALLERS = 4;

  private LayerOverhead() {}

  /** The layers over moto: how much of each request's time the emulator takes. */
  public static void onEmulator(Stack stack, DataSet data, DynamoDbAsyncClient dynamo, Settings settings, Report report)
      throws Exception {
    Map<Op, Map<String, List<Summary>>> runs;
    try (Layers layers = new Layers(stack, data, dynamo, null)) {
      runs = measure(layers, settings.layerRate(), 1, settings.warmup(), settings.layerMeasure());
    }
    Table table = table(runs);
    report.heading(TITLE)
        .paragraph("Each operation at a fixed rate, open loop, against DynamoDB directly (the same key lookup "
            + "through the AWS SDK), the service, and the gateway. The three layers run side by side: one "
            + "schedule takes turns between them, one request to each layer per round, with the same key, so a "
            + "slow stretch of the machine or a GC pause in the load generator falls on all three alike (run "
            + "one after the other, such noise fell on whichever layer ran then, and the difference between two "
            + "layers' p99 was mostly that). The order within each round is shuffled, so that no layer always "
            + "follows the same neighbour. Twice: on the emulator, then on a stand-in DynamoDB endpoint. "
            + "Latencies in ms, p50 / p99.")
        .paragraph("**On the emulator** (moto through our launcher, " + (int) settings.layerRate()
            + " requests/s to each layer, " + settings.layerMeasure().toSeconds() + " s measured after "
            + settings.warmup().toMillis() + " ms of warm-up, one round):")
        .table(table.headers, table.rows)
        .paragraph("Here the emulator is the bottleneck: moto serves one request at a time through our launcher, "
            + "a few ms each in Python, and for the reads the bare DynamoDB call is " + Math.round(table.minShare * 100)
            + "–" + Math.round(table.maxShare * 100) + " % of the p50 through the gateway. The differences between "
            + "layers are then within moto's own jitter (a negative \"adds\" is that jitter), so the targets are "
            + "judged on the stand-in below.")
        .data("layer_overhead_emulator", table.json);
  }

  /**
   * The layers over a stand-in DynamoDB with canned answers: the targets. {@code nginx} forwards to the
   * same services, as a fourth layer beside the gateway: what a peer proxy's hop costs under the same
   * load on the same machine.
   */
  public static void onStandIn(Stack stack, DataSet data, DynamoDbAsyncClient dynamo, Nginx nginx, Settings settings,
      Report report) throws Exception {
    Duration warmup = settings.standInMeasure().dividedBy(6);
    List<Double> warmUpRounds;
    Map<Op, Map<String, List<Summary>>> runs;
    double busy;
    try (Layers layers = new Layers(stack, data, dynamo, nginx)) {
      warmUpRounds = warmUp(layers, settings);
      MachineCpu before = MachineCpu.read();
      runs = measure(layers, settings.standInRate(), settings.standInRounds(), warmup, settings.standInMeasure());
      busy = MachineCpu.read().busySince(before);
    }
    Table table = table(runs);
    report.heading(TITLE).paragraph("**On a stand-in DynamoDB** (an HTTP endpoint in the benchmark's process that answers "
            + "GetItem, Query and TransactWriteItems with canned items in the services' format, in microseconds), "
            + (int) settings.standInRate() + " requests/s to each layer, " + settings.standInMeasure().toMillis()
            + " ms measured after " + warmup.toMillis() + " ms of warm-up, medians of " + settings.standInRounds()
            + " rounds. " + nginx.version + " (`grpc_pass` to the same two services, routed by service as the "
            + "gateway routes, one worker per core, upstream keepalive) is a fourth layer beside the gateway: a peer "
            + "proxy's hop under the same load, on the same machine. Before them, uncounted: every operation through every layer in a closed loop of "
            + CLOSED_LOOP_CALLERS + " callers for " + settings.standInMeasure().toMillis() + " ms, then rounds at "
            + "the measured rate until the JVMs stop getting faster (two rounds in a row agree on the sum of "
            + "their p50s within 10 %, at most " + MAX_WARM_UP_ROUNDS + " rounds): " + warmUpRounds.size() + " rounds here, sums "
            + warmUpRounds.stream().map(Report::ms).toList() + " ms. Four JVMs compiling on 2 cores warm up "
            + "slowly: after one uncounted round at the measured rate, the first counted rounds were still up to "
            + "30 times slower than the last.")
        .table(table.headers, table.rows)
        .table(List.of("Target (on the stand-in)", "Worst measured", "Met"), List.of(
            List.of("gateway adds ≤ 0.3 ms at p50", ms(table.worstGatewayP50), table.worstGatewayP50 <= 0.3 ? "yes" : "no"),
            List.of("gateway adds ≤ 1 ms at p99", ms(table.worstGatewayP99), table.worstGatewayP99 <= 1 ? "yes" : "no"),
            List.of("service adds ≤ 0.5 ms at p50 over DynamoDB", ms(table.worstServiceP50),
                table.worstServiceP50 <= 0.5 ? "yes" : "no"),
            List.of("for reference, nginx adds (p50 / p99, the gateway's targets)",
                ms(table.worstNginxP50) + " / " + ms(table.worstNginxP99),
                (table.worstNginxP50 <= 0.3 ? "yes" : "no") + " / " + (table.worstNginxP99 <= 1 ? "yes" : "no"))))
        .paragraph("What limits it: with the store answering in microseconds, each hop is one loopback gRPC call "
            + "(HTTP/2 framing, protobuf, the metrics interceptor, a wake-up of the process that receives it) and, "
            + "in the service, validation, key building and the AWS SDK's request pipeline (signing, marshalling). "
            + "Here the load generator, the stack's three JVMs and nginx share 2 cores, busy "
            + Math.round(busy * 100) + " % of the time during the counted rounds (from /proc/stat), so a wake-up can "
            + "wait for a core, and a hop costs more than in section 2, where only the proxy and a stand-in backend "
            + "run. nginx, in the same schedule, shows what a proxy's hop costs here: worst " + ms(table.worstNginxP50)
            + " ms at p50 and " + ms(table.worstNginxP99) + " ms at p99, against the gateway's "
            + ms(table.worstGatewayP50) + " and " + ms(table.worstGatewayP99) + ". The p99 column also carries "
            + "the machine's scheduling noise and the JVMs' GC pauses (G1 young pauses of a few ms), so its "
            + "differences between layers vary more from run to run than the p50's.")
        .data("layer_overhead_standin", table.json)
        .data("layer_overhead_standin_machine_busy_share", busy);
  }

  /**
   * Warms the JVMs up, uncounted. First every operation through every layer in a closed loop: cold, the
   * JVMs could not keep up with the fixed rate, and the queue an open loop builds then took rounds
   * to drain (a first round summed 30 s of p50s). Then rounds at the measured rate until two in a row
   * agree, within 10 %, on the sum of their p50s (at most {@code MAX_WARM_UP_ROUNDS}). Returns each of
   * those rounds' sums, in ms.
   */
  private static List<Double> warmUp(Layers layers, Settings settings) throws Exception {
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, 1);
    for (Op op : OPS) {
      for (String layer : layers.targets.keySet()) {
        ClosedLoop.run("warm-up", layers.targets.get(layer).call(op, i -> keys.next()), CLOSED_LOOP_CALLERS,
            Duration.ZERO, settings.standInMeasure());
      }
    }
    List<Double> sums = new ArrayList<>();
    Duration measure = settings.standInMeasure().dividedBy(2);
    while (sums.size() < MAX_WARM_UP_ROUNDS) {
      double sum = measure(layers, settings.standInRate(), 1, Duration.ZERO, measure).values().stream()
          .flatMap(byLayer -> byLayer.values().stream()).flatMap(List::stream).mapToDouble(Summary::p50).sum();
      sums.add(sum);
      // Steady once two rounds in a row agree within 10 %: a single slow round (the machine's, not the
      // JVMs') must not end the warm-up, as "slower than the best" did.
      if (sums.size() >= 2 && Math.abs(sum - sums.get(sums.size() - 2)) <= 0.1 * Math.min(sum, sums.get(sums.size() - 2))) {
        break;
      }
    }
    return sums;
  }

  /**
   * {@code rounds} rounds of every operation, the layers side by side in one schedule
   * ({@link OpenLoop#interleaved}) at {@code ratePerLayer} each: one after the other, a slow stretch
   * of the machine or a GC pause in the load generator fell on whichever layer ran then, and the
   * difference between two layers' p99 was mostly that.
   */
  private static Map<Op, Map<String, List<Summary>>> measure(Layers layers, double ratePerLayer, int rounds,
      Duration warmup, Duration measure) throws Exception {
    Map<Op, Map<String, List<Summary>>> runs = new LinkedHashMap<>();
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, 1);
    List<String> layerNames = List.copyOf(layers.targets.keySet());
    for (int round = 0; round < rounds; round++) {
      // Each round starts at the next operation: the first after a switch of service ran slower (a
      // service idle for a while), and rotating puts that on every operation once.
      for (int k = 0; k < OPS.size(); k++) {
        Op op = OPS.get((round + k) % OPS.size());
        List<Call> calls = layerNames.stream().map(layer -> layers.targets.get(layer).call(op, i -> keys.next())).toList();
        List<String> names = layerNames.stream().map(layer -> op + " via " + layer).toList();
        List<Summary> summaries = OpenLoop.interleaved(names, calls, ratePerLayer * layerNames.size(), warmup, measure);
        for (int l = 0; l < layerNames.size(); l++) {
          runs.computeIfAbsent(op, o -> new LinkedHashMap<>())
              .computeIfAbsent(layerNames.get(l), x -> new ArrayList<>()).add(summaries.get(l));
        }
      }
    }
    return runs;
  }

  /**
   * The layers as targets, by name, in order, opened once for the warm-up and all the rounds (opened
   * per round, each round began on channels that had just connected); nginx, when given, as the last.
   */
  private static final class Layers implements AutoCloseable {
    final Map<String, Target> targets = new LinkedHashMap<>();
    private final List<GrpcTarget> opened = new ArrayList<>();

    Layers(Stack stack, DataSet data, DynamoDbAsyncClient dynamo, Nginx nginx) {
      targets.put("dynamodb", new DynamoTarget(dynamo, stack.table, data));
      targets.put("service", grpc("service", stack.inventory.grpcPort, stack.orders.grpcPort, data));
      targets.put("gateway", grpc("gateway", stack.gateway.grpcPort, stack.gateway.grpcPort, data));
      if (nginx != null) {
        targets.put("nginx", grpc("nginx", nginx.port, nginx.port, data));
      }
    }

    private GrpcTarget grpc(String name, int inventoryPort, int orderPort, DataSet data) {
      GrpcTarget target = new GrpcTarget(name, "127.0.0.1:" + inventoryPort, "127.0.0.1:" + orderPort, data);
      opened.add(target);
      return target;
    }

    @Override
    public void close() throws InterruptedException {
      for (GrpcTarget target : opened) {
        target.close();
      }
    }
  }

  /** The rows of one run, and its worst differences between layers. */
  private static final class Table {
    final List<String> headers = new ArrayList<>();
    final List<List<String>> rows = new ArrayList<>();
    final List<Map<String, Object>> json = new ArrayList<>();
    double worstGatewayP50;
    double worstGatewayP99;
    double worstServiceP50;
    double worstNginxP50;
    double worstNginxP99;
    double minShare = Double.MAX_VALUE;
    double maxShare;
  }

  /** One row per operation; where nginx was measured, its layer and what it adds over the service too. */
  private static Table table(Map<Op, Map<String, List<Summary>>> runs) {
    boolean nginx = runs.get(OPS.get(0)).containsKey("nginx");
    Table t = new Table();
    t.headers.addAll(List.of("Operation", "DynamoDB", "Service", "Gateway"));
    if (nginx) {
      t.headers.add("nginx");
    }
    t.headers.addAll(List.of("Service adds", "Gateway adds"));
    if (nginx) {
      t.headers.add("nginx adds");
    }
    t.headers.add("Errors");
    for (Op op : OPS) {
      Map<String, List<Summary>> byLayer = runs.get(op);
      double d50 = Medians.of(byLayer.get("dynamodb"), Summary::p50);
      double d99 = Medians.of(byLayer.get("dynamodb"), Summary::p99);
      double s50 = Medians.of(byLayer.get("service"), Summary::p50);
      double s99 = Medians.of(byLayer.get("service"), Summary::p99);
      double g50 = Medians.of(byLayer.get("gateway"), Summary::p50);
      double g99 = Medians.of(byLayer.get("gateway"), Summary::p99);
      long errors = byLayer.values().stream().flatMap(List::stream).mapToLong(Summary::errorCount).sum();
      t.worstGatewayP50 = Math.max(t.worstGatewayP50, g50 - s50);
      t.worstGatewayP99 = Math.max(t.worstGatewayP99, g99 - s99);
      t.worstServiceP50 = Math.max(t.worstServiceP50, s50 - d50);
      if (op != Op.PLACE_ORDER) {
        t.minShare = Math.min(t.minShare, d50 / g50);
        t.maxShare = Math.max(t.maxShare, d50 / g50);
      }
      List<String> row = new ArrayList<>(List.of(op.toString(), ms(d50) + " / " + ms(d99), ms(s50) + " / " + ms(s99),
          ms(g50) + " / " + ms(g99)));
      double n50 = 0;
      double n99 = 0;
      if (nginx) {
        n50 = Medians.of(byLayer.get("nginx"), Summary::p50);
        n99 = Medians.of(byLayer.get("nginx"), Summary::p99);
        t.worstNginxP50 = Math.max(t.worstNginxP50, n50 - s50);
        t.worstNginxP99 = Math.max(t.worstNginxP99, n99 - s99);
        row.add(ms(n50) + " / " + ms(n99));
      }
      row.addAll(List.of(ms(s50 - d50) + " / " + ms(s99 - d99), ms(g50 - s50) + " / " + ms(g99 - s99)));
      if (nginx) {
        row.add(ms(n50 - s50) + " / " + ms(n99 - s99));
      }
      row.add(Long.toString(errors));
      t.rows.add(row);
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("op", op.toString());
      json.putAll(byLayer);
      t.json.add(json);
    }
    return t;
  }
}
