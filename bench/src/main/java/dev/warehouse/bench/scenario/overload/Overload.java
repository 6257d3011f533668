package dev.warehouse.bench.scenario.overload;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.Call;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.Flood;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.load.OpenLoop;
import dev.warehouse.bench.load.Outcome;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.scenario.Settings;
import dev.warehouse.bench.stack.Cores;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.standin.StandInDynamo;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.Target.Op;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * Scenario 10: one route flooded through the gateway, on moto and on the stand-in DynamoDB. A6
 * (GetOrder)'s capacity is measured first (a closed loop of {@value #CAPACITY_CALLERS} callers: OK calls/s)
 * with its unloaded latency (an open loop at {@value #UNLOADED_SHARE} of that); then A6 is offered
 * {@link #MULTIPLES} times its capacity, each level for a fixed time, an open loop that keeps every
 * outcome ({@link Flood}). During each level a polite caller asks another route of the same service
 * (A5, ListCustomerOrders) every {@link #POLITE_EVERY} with a {@link #POLITE_DEADLINE} deadline, each
 * process's RSS is sampled, and the admission limits are scraped; after it, A6 is probed every
 * {@link #PROBE_EVERY} until it answers at normal latency again. The flood's callers do not retry:
 * what is measured is what the system does with the load, not a client's policy.
 *
 * <p>This class drives the load; {@link OverloadSampler}, {@link Usage} and {@link RefusalTimers} read what
 * the stack did meanwhile, and {@link OverloadReport} writes the section.
 */
public final class Overload {

  static final List<Integer> MULTIPLES = List.of(1, 2, 5, 10);
  static final int CAPACITY_CALLERS = 8;
  static final int MAX_WARM_UP_ROUNDS = 12;
  static final int AGREEING_ROUNDS = 3;
  static final double UNLOADED_SHARE = 0.3;
  static final Duration POLITE_EVERY = Duration.ofMillis(200);
  static final Duration POLITE_DEADLINE = Duration.ofSeconds(2);
  static final Duration PROBE_EVERY = Duration.ofMillis(50);
  /** Probes in a row that must answer OK at normal latency: one quick answer amid a draining queue is luck. */
  static final int PROBES_IN_A_ROW = 3;
  static final Duration PROBE_DEADLINE = Duration.ofSeconds(2);
  static final Duration RECOVERY_GIVE_UP = Duration.ofSeconds(30);
  static final Duration DRAIN = Duration.ofSeconds(30);

  static final double GOODPUT_TARGET = 0.90;
  static final double ADMITTED_P99_TARGET = 3.0;
  static final double REJECTION_TARGET_MS = 5.0;
  static final double POLITE_TARGET = 0.99;
  static final long RSS_TARGET_MB = 400;
  static final double RECOVERY_TARGET_S = 2.0;

  static final String OK = "OK";
  static final String REFUSED_BY_GATEWAY = "RESOURCE_EXHAUSTED (gateway)";
  static final String REFUSED_BY_SERVICE = "RESOURCE_EXHAUSTED (order-service)";

  private Overload() {}

  public static void run(Path root, Settings settings, Report report) throws Exception {
    report.heading("10. Overload");
    Map<String, Store> stores = new LinkedHashMap<>();
    try (Stack stack = Stack.start(root, "bench-" + UUID.randomUUID());
        DynamoDbAsyncClient dynamo = Stack.client(stack.dynamoEndpoint)) {
      DataSet data = new DataSet(settings.dataItems());
      data.load(dynamo, stack.table);
      stores.put("moto", measure("moto", stack, data, settings));
    }
    String table = "bench-" + UUID.randomUUID();
    try (StandInDynamo standIn = StandInDynamo.start(table);
        Stack stack = Stack.on(root, table, standIn.endpoint())) {
      stores.put("stand-in", measure("stand-in", stack, new DataSet(settings.dataItems()), settings));
    }
    OverloadReport.write(report, settings, stores);
  }

  private static Store measure(String store, Stack stack, DataSet data, Settings settings) throws Exception {
    log(store + ": capacity of A6 through the gateway");
    String gateway = "127.0.0.1:" + stack.gateway.grpcPort;
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, 10);
    try (Cores cores = Cores.split(stack);
        GrpcTarget flood = new GrpcTarget("flood", gateway, gateway, data);
        Caller polite = new Caller(gateway, data)) {
      Call a6 = flood.call(Op.GET_ORDER, i -> keys.next());
      ClosedLoop.run("warm-up", polite::listCustomerOrders, 2, Duration.ZERO, settings.overloadMeasure().dividedBy(2));
      List<Double> warmUp = warmUp(a6, settings.overloadMeasure().dividedBy(2));
      OverloadSampler.quiet(stack);
      Usage capacityUsage = Usage.start(stack);
      Summary capacity = ClosedLoop.run("A6 capacity", a6, CAPACITY_CALLERS, settings.warmup(), settings.overloadMeasure());
      Usage.Measured capacityCpu = capacityUsage.stop();
      double unloadedRate = Math.max(1, capacity.throughput() * UNLOADED_SHARE);
      OverloadSampler.quiet(stack);
      // Twice as long as the capacity run: at 30 % of moto's capacity, one run's p99 is its few slowest calls.
      Summary unloaded = OpenLoop.run("A6 unloaded", a6, unloadedRate, settings.warmup(), settings.overloadMeasure().multipliedBy(2),
          null);
      log(store + ": " + num(capacity.throughput()) + " OK calls/s, unloaded p99 " + ms(unloaded.p99()) + " ms");

      List<Level> levels = new ArrayList<>();
      for (double rate : rates(capacity.throughput(), MULTIPLES)) {
        OverloadSampler.quiet(stack);
        int multiple = MULTIPLES.get(levels.size());
        log(store + ": " + multiple + "× (" + num(rate) + " calls/s) for " + settings.overloadLevel().toSeconds() + " s");
        Level level = level(stack, multiple, rate, a6, polite, capacity.throughput(), unloaded.p99(), settings);
        levels.add(level);
        if (!level.troubles().isEmpty()) {
          // A stack with a broken process measures nothing more of admission; the report says which level broke it.
          log(store + ": stopping after " + multiple + "×: " + level.troubles());
          break;
        }
      }
      return new Store(store, cores.description(), warmUp, capacity.throughput(), capacity, capacityCpu, unloadedRate,
          unloaded, levels);
    }
  }

  /**
   * Compiles the route's path before its capacity is measured: closed-loop rounds of {@code round} until
   * three in a row agree within 10 % ({@link #agree}) (at most {@value #MAX_WARM_UP_ROUNDS}). After one fixed round the order-service
   * was still compiling, and its capacity was measured while it did (docs/performance-log.md). Returns each
   * round's OK calls/s.
   */
  private static List<Double> warmUp(Call a6, Duration round) throws InterruptedException {
    List<Double> rounds = new ArrayList<>();
    while (rounds.size() < MAX_WARM_UP_ROUNDS) {
      rounds.add(ClosedLoop.run("warm-up", a6, CAPACITY_CALLERS, Duration.ZERO, round).throughput());
      if (agree(rounds)) {
        break;
      }
    }
    return rounds;
  }

  /**
   * Whether the last three rounds agree within 10 % of the least of them. Two were not enough: on the stand-in,
   * compilation on the services' one core let two rounds agree while still rising ([533, 757, 800], then 1,141 in
   * the capacity run and 3,394 served at 5×), so every level offered a third of what its multiple said.
   */
  static boolean agree(List<Double> rounds) {
    if (rounds.size() < AGREEING_ROUNDS) {
      return false;
    }
    List<Double> last = rounds.subList(rounds.size() - AGREEING_ROUNDS, rounds.size());
    double least = last.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
    double most = last.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
    return most - least <= 0.1 * least;
  }

  /** The capacity's multiples as rates (calls/s). */
  static List<Double> rates(double capacity, List<Integer> multiples) {
    if (!(capacity > 0)) {
      throw new IllegalArgumentException("a route that served nothing has no multiples: " + capacity);
    }
    return multiples.stream().map(m -> m * capacity).toList();
  }

  private static Level level(Stack stack, int multiple, double rate, Call a6, Caller caller, double capacity,
      double unloadedP99, Settings settings) throws Exception {
    Usage usage = Usage.start(stack);
    RefusalTimers timersBefore = RefusalTimers.scrape(stack);
    OverloadSampler sampler = OverloadSampler.start(stack);
    Polite polite = Polite.start(caller);
    Flood flood = Flood.start(Op.GET_ORDER.patternId(), a6, rate, settings.overloadLevel(), Overload::outcome);
    long end = flood.awaitSchedule();
    Polite.Result politeResult = polite.stop();
    OptionalLong recovery = recover(caller, end, (long) (ADMITTED_P99_TARGET * unloadedP99 * 1e6));
    boolean drained = flood.awaitAnswers(DRAIN);
    OverloadSampler.Result samples = sampler.stop();
    Usage.Measured cpu = usage.stop();
    Map<String, String> troubles = OverloadSampler.troubles(stack);
    RefusalTimers timersAfter = RefusalTimers.scrape(stack);
    Flood.Result result = flood.result();

    Summary admitted = result.summary("admitted", OK::equals, false);
    Summary refused = result.summary("refused", Overload::isRefusal, false);
    Summary refusedSinceSent = result.summary("refused since sent", Overload::isRefusal, true);
    double goodput = admitted.count() / result.seconds();
    return new Level(multiple, rate, result.offeredPerSecond(), result.sent(), result.lateP50Ms(), result.lateP99Ms(),
        result.lateMaxMs(), goodput, goodput / capacity, admitted.p50(), admitted.p99(), admitted.p99() / unloadedP99,
        refused.count(), refused.p50(), refused.p99(), refusedSinceSent.p50(), refusedSinceSent.p99(), result.counts(),
        drained ? 0 : result.unanswered(), politeResult.sent(), politeResult.ok(), politeResult.statuses(),
        politeResult.p99Ms(), samples.peakRssMb(), recovery.isPresent() ? recovery.getAsLong() / 1e9 : null,
        samples.gateway(), samples.service(), samples.rejectedByGateway(), samples.rejectedByService(),
        timersAfter.gatewayMs(timersBefore, 0.5), timersAfter.gatewayMs(timersBefore, 0.99),
        timersAfter.serviceMs(timersBefore, 0.5), timersAfter.serviceMs(timersBefore, 0.99), samples.timeline(), cpu,
        troubles);
  }

  /**
   * Probes A6 every {@link #PROBE_EVERY} from the flood's end ({@code end}, nanoTime) until
   * {@value #PROBES_IN_A_ROW} in a row answer OK within {@code normalNanos}; returns when the first of
   * those answered, since the end (empty if that never happened within {@link #RECOVERY_GIVE_UP}).
   */
  private static OptionalLong recover(Caller caller, long end, long normalNanos) throws InterruptedException {
    List<CompletableFuture<Probe>> probes = new ArrayList<>();
    long next = end;
    while (System.nanoTime() - end < RECOVERY_GIVE_UP.toNanos()) {
      long wait = next - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait);
      }
      long sentAt = System.nanoTime();
      probes.add(caller.getOrder(probes.size()).handle((ok, failure) ->
          new Probe(sentAt - end, failure == null, System.nanoTime() - sentAt)));
      OptionalLong recovered = recovered(answeredPrefix(probes), normalNanos, PROBES_IN_A_ROW);
      if (recovered.isPresent()) {
        return recovered;
      }
      next += PROBE_EVERY.toNanos();
    }
    CompletableFuture.allOf(probes.toArray(CompletableFuture[]::new)).exceptionally(t -> null)
        .completeOnTimeout(null, PROBE_DEADLINE.toMillis() * 2, TimeUnit.MILLISECONDS).join();
    return recovered(answeredPrefix(probes), normalNanos, PROBES_IN_A_ROW);
  }

  /** The probes up to the first one still unanswered: a later run of good answers could start before it. */
  private static List<Probe> answeredPrefix(List<CompletableFuture<Probe>> probes) {
    List<Probe> answered = new ArrayList<>();
    for (CompletableFuture<Probe> probe : probes) {
      if (!probe.isDone()) {
        break;
      }
      answered.add(probe.join());
    }
    return answered;
  }

  /** One recovery probe: sent {@code sentNanos} after the flood's end, OK or not, answered in {@code latencyNanos}. */
  record Probe(long sentNanos, boolean ok, long latencyNanos) {}

  /**
   * When normal service returned, in nanoseconds since the flood's end: the answer of the first probe of
   * the first {@code inARow} consecutive probes (in the order sent) that all answered OK within
   * {@code normalNanos}. Empty when no such run exists yet.
   */
  static OptionalLong recovered(List<Probe> probes, long normalNanos, int inARow) {
    int run = 0;
    for (int i = 0; i < probes.size(); i++) {
      Probe p = probes.get(i);
      run = p.ok() && p.latencyNanos() <= normalNanos ? run + 1 : 0;
      if (run == inARow) {
        Probe first = probes.get(i - inARow + 1);
        return OptionalLong.of(first.sentNanos() + first.latencyNanos());
      }
    }
    return OptionalLong.empty();
  }

  /**
   * A failure's name in the counts: its status code, and for an admission refusal (RESOURCE_EXHAUSTED,
   * reason OVERLOADED) who refused it: the gateway's refusal names the backend ({@code service} in its
   * ErrorInfo's metadata), a service's own does not.
   */
  static String outcome(Throwable failure) {
    String code = Outcome.of(failure);
    if (!code.equals(Status.Code.RESOURCE_EXHAUSTED.name())) {
      return code;
    }
    com.google.rpc.Status status = StatusProto.fromThrowable(failure);
    if (status != null) {
      for (Any detail : status.getDetailsList()) {
        if (detail.is(ErrorInfo.class)) {
          try {
            ErrorInfo info = detail.unpack(ErrorInfo.class);
            if (info.getReason().equals("OVERLOADED")) {
              return info.getMetadataMap().containsKey("service") ? REFUSED_BY_GATEWAY : REFUSED_BY_SERVICE;
            }
          } catch (InvalidProtocolBufferException e) {
            break;
          }
        }
      }
    }
    return code;
  }

  static boolean isRefusal(String outcome) {
    return outcome.equals(REFUSED_BY_GATEWAY) || outcome.equals(REFUSED_BY_SERVICE);
  }

  private static void log(String message) {
    System.out.println(java.time.Instant.now().toString().substring(11, 19) + " bench: " + message);
  }
}
