package dev.warehouse.bench.scenario;

import dev.warehouse.bench.load.Call;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.load.OpenLoop;
import dev.warehouse.bench.stats.LatencyStats;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.Target;
import dev.warehouse.bench.target.Target.Op;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * Targets measured side by side: rounds of every operation in which one open-loop schedule takes
 * turns between the targets ({@link OpenLoop#interleaved}), with the same keys, so a slow stretch of
 * the machine or a GC pause in the load generator falls on all of them alike. Scenarios 1 and 7 compare
 * layers, and security settings, this way.
 */
final class SideBySide {

  static final int MAX_WARM_UP_ROUNDS = 6;
  static final int CLOSED_LOOP_CALLERS = 4;

  private SideBySide() {}

  /**
   * Warms the targets' processes up, uncounted. First every operation through every target in a
   * closed loop: cold, the JVMs could not keep up with the fixed rate, and the queue an open loop
   * builds then took rounds to drain. Then rounds at {@code rate} until two in a row agree, within
   * 10 %, on the sum of their p50s (at most {@value #MAX_WARM_UP_ROUNDS}). Returns each of those
   * rounds' sums, in ms.
   */
  static List<Double> warmUp(Map<String, Target> targets, List<Op> ops, double rate, Duration measure)
      throws Exception {
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, 1);
    for (Op op : ops) {
      for (Target target : targets.values()) {
        ClosedLoop.run("warm-up", target.call(op, i -> keys.next()), CLOSED_LOOP_CALLERS, Duration.ZERO, measure);
      }
    }
    List<Double> sums = new ArrayList<>();
    while (sums.size() < MAX_WARM_UP_ROUNDS) {
      double sum = measure(targets, ops, rate, 1, Duration.ZERO, measure.dividedBy(2)).summaries.values().stream()
          .flatMap(byTarget -> byTarget.values().stream()).flatMap(List::stream).mapToDouble(Summary::p50).sum();
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
   * {@code rounds} rounds of every operation, the targets side by side in one schedule at
   * {@code ratePerTarget} each, divided by the operation's DynamoDB calls ({@link Op#dynamoCalls()}): at the
   * reads' rate, PlaceOrder's six calls asked 2.5 times what the machine serves, and its turn measured
   * the queue that built (docs/performance-log.md).
   */
  static Rounds measure(Map<String, Target> targets, List<Op> ops, double ratePerTarget, int rounds, Duration warmup,
      Duration measure) throws Exception {
    Rounds runs = new Rounds();
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, 1);
    List<String> names = List.copyOf(targets.keySet());
    for (int round = 0; round < rounds; round++) {
      Map<String, Histogram> roundPool = new LinkedHashMap<>();
      runs.byRound.add(roundPool);
      // Each round starts at the next operation: the first after a switch of service ran slower (a
      // service idle for a while), and rotating puts that on every operation once.
      for (int k = 0; k < ops.size(); k++) {
        Op op = ops.get((round + k) % ops.size());
        List<Call> calls = names.stream().map(name -> targets.get(name).call(op, i -> keys.next())
            .countedBy(runs.started.computeIfAbsent(name, x -> new LongAdder()))).toList();
        List<String> labels = names.stream().map(name -> op + " via " + name).toList();
        List<Histogram> latencies = names.stream().map(name -> LatencyStats.histogram()).toList();
        List<Summary> summaries = OpenLoop.interleaved(labels, calls, ratePerTarget / op.dynamoCalls() * names.size(),
            warmup, measure,
            latencies);
        for (int t = 0; t < names.size(); t++) {
          String name = names.get(t);
          runs.summaries.computeIfAbsent(op, o -> new LinkedHashMap<>()).computeIfAbsent(name, x -> new ArrayList<>())
              .add(summaries.get(t));
          for (Map<String, Histogram> pool : List.of(runs.byOp.computeIfAbsent(op, o -> new LinkedHashMap<>()), roundPool,
              runs.all)) {
            pool.computeIfAbsent(name, x -> LatencyStats.histogram()).add(latencies.get(t));
          }
        }
      }
    }
    return runs;
  }

  /** Each target's {@code percentile}, in ms. */
  static Map<String, Double> percentile(Map<String, Histogram> byTarget, double percentile) {
    Map<String, Double> values = new LinkedHashMap<>();
    byTarget.forEach((name, latencies) -> values.put(name, Summary.percentile(latencies, percentile)));
    return values;
  }

  /**
   * What {@link #measure} measured: each round's summary by operation and target, for the medians of
   * rounds, and each target's latencies pooled: by operation over the rounds, by round over the
   * operations, and over everything. A p99 of one round's 500 calls is its fifth slowest call, and
   * moved by milliseconds from round to round; pooled, it rests on thousands.
   */
  static final class Rounds {
    final Map<Op, Map<String, List<Summary>>> summaries = new LinkedHashMap<>();
    final Map<Op, Map<String, Histogram>> byOp = new LinkedHashMap<>();
    final List<Map<String, Histogram>> byRound = new ArrayList<>();
    final Map<String, Histogram> all = new LinkedHashMap<>();
    /** Requests started to each target, warm-up included. */
    final Map<String, LongAdder> started = new LinkedHashMap<>();

    /** Requests started to these targets together. */
    long requests(String... names) {
      return Arrays.stream(names).mapToLong(name -> started.get(name).sum()).sum();
    }

    /** Errors over every round of every operation, by target. */
    long errors(String name) {
      return summaries.values().stream().map(byTarget -> byTarget.get(name)).flatMap(List::stream)
          .mapToLong(Summary::errorCount).sum();
    }
  }
}
