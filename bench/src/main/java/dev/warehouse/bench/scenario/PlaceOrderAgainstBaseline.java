package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.Call;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.load.OpenLoop;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.Jars;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.standin.StandInDynamo;
import dev.warehouse.bench.stats.LatencyStats;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.Target.Op;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.HdrHistogram.Histogram;

/**
 * Scenario 9 with {@code --baseline DIR}: PlaceOrder of an older build (the jars in DIR) and of this one in
 * one run, for targets of the kind "p50/p99 within 10 % of commit X's". Figures taken in different runs
 * differ by more than that on a small shared machine, so both builds are measured together: each runs its
 * own stack on a stand-in DynamoDB of its own (the same canned answers, its own table and port), with the
 * same settings, and one open-loop schedule takes turns between the four calls (each build via its
 * gateway and straight), so a slow stretch of the machine falls on old and new alike.
 *
 * <p>"The same settings": both get {@link Stack}'s environment, everything else at its defaults, as each
 * build would run. A setting a build added is compared at its default, which should mean what the older
 * build did: for 03cdee8, the new order-service's {@code ORDER_HOLD_SECONDS} (60 s) is the hold its
 * inventory gave by default, and {@code ORDER_STEP_BUDGET_MS} times status changes, not PlaceOrder.
 */
final class PlaceOrderAgainstBaseline {

  /** How much slower than the baseline the new build may be, at p50 and at p99: 10 %. */
  static final double ALLOWED_RATIO = 1.10;

  private static final List<String> PATHS = List.of("PlaceOrder via gateway", "PlaceOrder straight");
  private static final List<String> BUILDS = List.of("old", "new");

  private PlaceOrderAgainstBaseline() {}

  /**
   * Starts the baseline's stack beside {@code current} (this build's, already warm), measures both, and
   * stops the baseline's again before the scenario goes on: its idle JVMs would still take CPU.
   */
  static void run(Path root, Stack current, Jars baseline, Settings settings, Report report, Map<String, Object> data)
      throws Exception {
    String table = "bench-" + UUID.randomUUID();
    try (StandInDynamo standIn = StandInDynamo.start(table);
        Stack old = Stack.on(root, baseline, table, standIn.endpoint())) {
      compare(List.of(old, current), settings, report, data);
    }
  }

  /** {@code stacks}: the old, then the new. */
  private static void compare(List<Stack> stacks, Settings settings, Report report, Map<String, Object> data)
      throws Exception {
    DataSet dataSet = new DataSet(settings.dataItems());
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, dataSet.products);
    // In the order of labels(): each build's gateway, then its order-service straight.
    List<GrpcTarget> targets = new ArrayList<>();
    List<Call> calls = new ArrayList<>();
    for (int b = 0; b < BUILDS.size(); b++) {
      Stack stack = stacks.get(b);
      String gateway = "127.0.0.1:" + stack.gateway.grpcPort;
      targets.add(new GrpcTarget(BUILDS.get(b) + "-gateway", gateway, gateway, dataSet));
      targets.add(new GrpcTarget(BUILDS.get(b) + "-direct", "127.0.0.1:" + stack.inventory.grpcPort,
          "127.0.0.1:" + stack.orders.grpcPort, dataSet));
    }
    targets.forEach(t -> calls.add(t.call(Op.PLACE_ORDER, i -> keys.next())));
    List<String> labels = labels();
    // The two stacks share what scenario 9 offers its one stack: offered each that much, the 2-core machine
    // ran six services and two stand-ins past their limits, and the figures compared queues, not builds.
    double rate = BuyingStock.PLACE_RATE;
    try {
      List<Double> warmUp = warmUp(calls, labels, rate, settings);
      List<Histogram> pools = labels.stream().map(l -> LatencyStats.histogram()).toList();
      List<List<Summary>> rounds = new ArrayList<>();
      for (int round = 0; round < settings.standInRounds(); round++) {
        rounds.add(OpenLoop.interleaved(labels, calls, rate, settings.warmup(), settings.standInMeasure().multipliedBy(4),
            pools));
      }
      report(labels, pools, rounds, warmUp, rate, settings, report, data);
    } finally {
      for (GrpcTarget target : targets) {
        target.close();
      }
    }
  }

  /**
   * Warms the baseline's fresh JVMs (and the new ones again) as scenario 9 warms its stack: a closed loop
   * through each gateway, then interleaved rounds until two in a row agree within 10 % on the sum of their
   * p50s. Returns those sums, in ms.
   */
  private static List<Double> warmUp(List<Call> calls, List<String> labels, double rate, Settings settings)
      throws Exception {
    for (int b = 0; b < BUILDS.size(); b++) {
      ClosedLoop.run("warm-up", calls.get(b * PATHS.size()), SideBySide.CLOSED_LOOP_CALLERS, Duration.ZERO,
          settings.standInMeasure().multipliedBy(4));
    }
    List<Double> sums = new ArrayList<>();
    while (sums.size() < SideBySide.MAX_WARM_UP_ROUNDS) {
      double sum = OpenLoop.interleaved(labels, calls, rate, Duration.ZERO, settings.standInMeasure().multipliedBy(2))
          .stream().mapToDouble(Summary::p50).sum();
      sums.add(sum);
      if (sums.size() >= 2 && Math.abs(sum - sums.get(sums.size() - 2)) <= 0.1 * Math.min(sum, sums.get(sums.size() - 2))) {
        break;
      }
    }
    return sums;
  }

  private static void report(List<String> labels, List<Histogram> pools, List<List<Summary>> rounds,
      List<Double> warmUp, double rate, Settings settings, Report report, Map<String, Object> data) {
    List<List<String>> rows = new ArrayList<>();
    List<Map<String, Object>> json = new ArrayList<>();
    List<String> roundRatios = new ArrayList<>();
    for (int p = 0; p < PATHS.size(); p++) {
      int old = p;
      int now = PATHS.size() + p;
      double[] p50 = {Summary.percentile(pools.get(old), 50), Summary.percentile(pools.get(now), 50)};
      double[] p99 = {Summary.percentile(pools.get(old), 99), Summary.percentile(pools.get(now), 99)};
      long pathErrors = 0;
      for (int b = 0; b < BUILDS.size(); b++) {
        int k = b * PATHS.size() + p;
        // By status: shed load (RESOURCE_EXHAUSTED) is the machine's; another status may be the builds' own.
        Map<String, Long> byCode = new TreeMap<>();
        rounds.forEach(r -> r.get(k).errors().forEach((code, n) -> byCode.merge(code, n, Long::sum)));
        long errors = byCode.values().stream().mapToLong(Long::longValue).sum();
        pathErrors += errors;
        rows.add(List.of(PATHS.get(p), BUILDS.get(b), ms(p50[b]), ms(p99[b]), Long.toString(pools.get(k).getTotalCount()),
            errors == 0 ? "0" : errors + " " + byCode, ""));
        json.add(Map.of("call", PATHS.get(p), "build", BUILDS.get(b), "p50_ms", p50[b], "p99_ms", p99[b],
            "calls", pools.get(k).getTotalCount(), "errors", byCode));
      }
      double p50Ratio = newOverOld(pools.get(now), pools.get(old), 50);
      double p99Ratio = newOverOld(pools.get(now), pools.get(old), 99);
      rows.add(List.of(PATHS.get(p), "new / old", ratio(p50Ratio), ratio(p99Ratio), "", "",
          // Failed calls are not timed: shed load (RESOURCE_EXHAUSTED) leaves the ratio to the calls that got through.
          "p50 " + verdict(p50Ratio) + ", p99 " + verdict(p99Ratio) + (pathErrors > 0 ? "; answered calls only (errors)" : "")));
      json.add(Map.of("call", PATHS.get(p), "build", "new / old", "p50_ratio", p50Ratio, "p99_ratio", p99Ratio,
          "p50_met", p50Ratio <= ALLOWED_RATIO, "p99_met", p99Ratio <= ALLOWED_RATIO));
      roundRatios.add(PATHS.get(p) + " " + rounds.stream()
          .map(r -> ratio(r.get(now).p50() / r.get(old).p50())).toList());
    }
    report.paragraph("**Against a baseline build** (`--baseline`): PlaceOrder of the baseline's jars (old) and of this "
            + "build (new), each on a stack and a stand-in DynamoDB of its own with the same settings, in one schedule "
            + "that takes turns between the four calls (each build via its gateway and straight, the order shuffled in "
            + "each turn), at " + num(rate) + " calls/s in all: what scenario 9 offers its one stack, shared by both. "
            + "Warm-up as above (" + warmUp.size() + " rounds, sums " + warmUp.stream().map(Report::ms).toList()
            + " ms), then " + rounds.size() + " rounds of " + settings.standInMeasure().multipliedBy(4).toMillis() / 1000.0
            + " s; p50 and p99 over the rounds' calls together. Within 10 %: new at most " + ratio(ALLOWED_RATIO)
            + " times old (faster counts as met). Each round's new/old p50 ratio, for the spread: "
            + String.join("; ", roundRatios) + ".")
        .table(List.of("Call", "Build", "p50 (ms)", "p99 (ms)", "Calls", "Errors", "Within 10 %"), rows);
    data.put("place_order_against_baseline", json);
  }

  /** Labels of the calls, in order: old via gateway, old straight, new via gateway, new straight. */
  static List<String> labels() {
    List<String> labels = new ArrayList<>();
    for (String build : BUILDS) {
      PATHS.forEach(path -> labels.add(path + ", " + build));
    }
    return labels;
  }

  /** New's {@code percentile} over old's; NaN when either answered nothing (all errors is no latency to compare). */
  static double newOverOld(Histogram now, Histogram old, double percentile) {
    return now.getTotalCount() == 0 || old.getTotalCount() == 0 ? Double.NaN
        : Summary.percentile(now, percentile) / Summary.percentile(old, percentile);
  }

  /** "met" when new/old is at most {@link #ALLOWED_RATIO}; a ratio of nothing measured (NaN) is not met. */
  static String verdict(double newOverOld) {
    return newOverOld <= ALLOWED_RATIO ? "met" : "not met";
  }

  private static String ratio(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }
}
