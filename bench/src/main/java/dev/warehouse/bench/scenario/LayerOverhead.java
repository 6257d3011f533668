package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.load.OpenLoop;
import dev.warehouse.bench.report.Report;
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
  private static final List<String> LAYERS = List.of("dynamodb", "service", "gateway");
  private static final String TITLE = "1. Layer overhead";
  private static final List<String> HEADERS =
      List.of("Operation", "DynamoDB", "Service", "Gateway", "Service adds", "Gateway adds", "Errors");

  private LayerOverhead() {}

  /** The layers over moto: how much of each request's time the emulator takes. */
  public static void onEmulator(Stack stack, DataSet data, DynamoDbAsyncClient dynamo, Settings settings, Report report)
      throws Exception {
    Map<Op, Map<String, List<Summary>>> runs = measure(stack, data, dynamo, settings.layerRate(), 1, settings);
    Table table = table(runs);
    report.heading(TITLE)
        .paragraph("Each operation at a fixed rate, open loop, " + settings.measure().toSeconds() + " s measured after "
            + settings.warmup().toMillis() + " ms of warm-up, against DynamoDB directly (the same key lookup through "
            + "the AWS SDK), the service, and the gateway, one after the other for each operation (run at the same "
            + "time, they fought over the 2 cores and measured the queue). Twice: on the emulator, then on a "
            + "stand-in DynamoDB endpoint. Latencies in ms, p50 / p99.")
        .paragraph("**On the emulator** (moto through our launcher, " + (int) settings.layerRate()
            + " requests/s, one round):")
        .table(HEADERS, table.rows)
        .paragraph("Here the emulator is the bottleneck: moto serves one request at a time through our launcher, "
            + "a few ms each in Python, and for the reads the bare DynamoDB call is " + Math.round(table.minShare * 100)
            + "–" + Math.round(table.maxShare * 100) + " % of the p50 through the gateway. The differences between "
            + "layers are then within moto's own jitter from one run to the next (a negative \"adds\" is that "
            + "jitter), so the targets are judged on the stand-in below.")
        .data("layer_overhead_emulator", table.json);
  }

  /** The layers over a stand-in DynamoDB with canned answers: the targets. */
  public static void onStandIn(Stack stack, DataSet data, DynamoDbAsyncClient dynamo, Settings settings, Report report)
      throws Exception {
    // Many short rounds: a slow stretch of the machine (it comes, whole seconds at a time) then spoils a
    // few rounds, which the median sets aside, instead of half of two long ones.
    Settings shortRounds = new Settings(settings.standInRounds(), settings.standInMeasure().dividedBy(2),
        settings.standInMeasure(), 0, 0, 0, Duration.ZERO, 0, 0, List.of(), Duration.ZERO, 0);
    warmUp(stack, data, dynamo, settings.standInRate(), shortRounds);
    Map<Op, Map<String, List<Summary>>> runs =
        measure(stack, data, dynamo, settings.standInRate(), shortRounds.rounds(), shortRounds);
    Table table = table(runs);
    report.heading(TITLE).paragraph("**On a stand-in DynamoDB** (an HTTP endpoint in the benchmark's process that answers "
            + "GetItem, Query and TransactWriteItems with canned items in the services' format, in microseconds), "
            + (int) settings.standInRate() + " requests/s, " + settings.standInMeasure().toMillis() + " ms measured after "
            + settings.standInMeasure().dividedBy(2).toMillis() + " ms of warm-up, after a first round that is not "
            + "counted; medians of " + settings.standInRounds() + " rounds (short rounds, so that a slow stretch of "
            + "the machine spoils a few of them, which the median sets aside):")
        .table(HEADERS, table.rows)
        .table(List.of("Target (on the stand-in)", "Worst measured", "Met"), List.of(
            List.of("gateway adds ≤ 0.3 ms at p50", ms(table.worstGatewayP50), table.worstGatewayP50 <= 0.3 ? "yes" : "no"),
            List.of("gateway adds ≤ 1 ms at p99", ms(table.worstGatewayP99), table.worstGatewayP99 <= 1 ? "yes" : "no"),
            List.of("service adds ≤ 0.5 ms at p50 over DynamoDB", ms(table.worstServiceP50),
                table.worstServiceP50 <= 0.5 ? "yes" : "no")))
        .paragraph("What limits it: with the store answering in microseconds, each hop's cost is one loopback "
            + "gRPC call (HTTP/2 framing, protobuf, the metrics interceptor) and, in the service, validation, key "
            + "building and the AWS SDK's request pipeline (signing, marshalling); all of it shares 2 cores with "
            + "the load generator and the stand-in, so the p99 column also carries the machine's scheduling noise.")
        .data("layer_overhead_standin", table.json);
  }

  /**
   * One round of every operation through every layer, as measured but not counted: after warm-ups of
   * a few seconds the first round was still up to 3 times slower at p50 than the next (four JVMs
   * compiling on 2 cores), so a whole round is the warm-up.
   */
  private static void warmUp(Stack stack, DataSet data, DynamoDbAsyncClient dynamo, double rate, Settings settings)
      throws Exception {
    measure(stack, data, dynamo, rate, 1, settings);
  }

  private static Map<Op, Map<String, List<Summary>>> measure(Stack stack, DataSet data, DynamoDbAsyncClient dynamo,
      double rate, int rounds, Settings settings) throws Exception {
    Map<Op, Map<String, List<Summary>>> runs = new LinkedHashMap<>();
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, 1);
    try (GrpcTarget gateway = grpc("gateway", stack.gateway.grpcPort, stack.gateway.grpcPort, data);
        GrpcTarget service = grpc("service", stack.inventory.grpcPort, stack.orders.grpcPort, data)) {
      Map<String, Target> targets = Map.of("dynamodb", new DynamoTarget(dynamo, stack.table, data),
          "service", service, "gateway", gateway);
      // One layer at a time: run together they fought over the 2 cores and measured the queue, not the layers.
      for (int round = 0; round < rounds; round++) {
        // Each round starts at the next operation: the first after a switch of service ran slower (a
        // service idle for half a round), and rotating puts that on every operation once.
        for (int k = 0; k < OPS.size(); k++) {
          Op op = OPS.get((round + k) % OPS.size());
          for (String layer : LAYERS) {
            Summary s = OpenLoop.run(op + " via " + layer, targets.get(layer).call(op, i -> keys.next()), rate,
                settings.warmup(), settings.measure(), null);
            runs.computeIfAbsent(op, o -> new LinkedHashMap<>()).computeIfAbsent(layer, l -> new ArrayList<>()).add(s);
          }
        }
      }
    }
    return runs;
  }

  private static GrpcTarget grpc(String name, int inventoryPort, int orderPort, DataSet data) {
    return new GrpcTarget(name, "127.0.0.1:" + inventoryPort, "127.0.0.1:" + orderPort, data);
  }

  /** The rows of one run, and its worst differences between layers. */
  private static final class Table {
    final List<List<String>> rows = new ArrayList<>();
    final List<Map<String, Object>> json = new ArrayList<>();
    double worstGatewayP50;
    double worstGatewayP99;
    double worstServiceP50;
    double minShare = Double.MAX_VALUE;
    double maxShare;
  }

  private static Table table(Map<Op, Map<String, List<Summary>>> runs) {
    Table t = new Table();
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
      t.rows.add(List.of(op.toString(), ms(d50) + " / " + ms(d99), ms(s50) + " / " + ms(s99), ms(g50) + " / " + ms(g99),
          ms(s50 - d50) + " / " + ms(s99 - d99), ms(g50 - s50) + " / " + ms(g99 - s99), Long.toString(errors)));
      t.json.add(Map.of("op", op.toString(), "dynamodb", byLayer.get("dynamodb"), "service", byLayer.get("service"),
          "gateway", byLayer.get("gateway")));
    }
    return t;
  }
}
