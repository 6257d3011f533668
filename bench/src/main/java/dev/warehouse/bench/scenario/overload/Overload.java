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
import dev.warehouse.bench.stack.MachineCpu;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Scrape;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.standin.StandInDynamo;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.Target.Op;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.OrderServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.StatusProto;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.DoubleSupplier;
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
  /** RSS is read this often during a level (from /proc: cheap); the admission metrics every fifth time. */
  static final Duration SAMPLE_EVERY = Duration.ofMillis(100);
  static final int SCRAPE_EVERY_SAMPLES = 5;

  static final double GOODPUT_TARGET = 0.90;
  static final double ADMITTED_P99_TARGET = 3.0;
  static final double REJECTION_TARGET_MS = 5.0;
  static final double POLITE_TARGET = 0.99;
  static final long RSS_TARGET_MB = 400;
  static final double RECOVERY_TARGET_S = 2.0;

  /** The gateway's limits for the order-service's routes, and the order-service's own (its limiter is named after it). */
  static final String GATEWAY_LIMITER = "limiter=\"" + OrderServiceGrpc.SERVICE_NAME + "\"";
  static final String SERVICE_LIMITER = "limiter=\"order-service\"";
  /** The flooded route's own limit: each route has one, and the report follows A6's. */
  static final String A6_ROUTE = "route=\"GetOrder\"";

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
    write(report, settings, stores);
  }

  // ---- measuring ----

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
      quiet(stack);
      Usage capacityUsage = Usage.start(stack);
      Summary capacity = ClosedLoop.run("A6 capacity", a6, CAPACITY_CALLERS, settings.warmup(), settings.overloadMeasure());
      Usage.Measured capacityCpu = capacityUsage.stop();
      double unloadedRate = Math.max(1, capacity.throughput() * UNLOADED_SHARE);
      quiet(stack);
      // Twice as long as the capacity run: at 30 % of moto's capacity, one run's p99 is its few slowest calls.
      Summary unloaded = OpenLoop.run("A6 unloaded", a6, unloadedRate, settings.warmup(), settings.overloadMeasure().multipliedBy(2),
          null);
      log(store + ": " + num(capacity.throughput()) + " OK calls/s, unloaded p99 " + ms(unloaded.p99()) + " ms");

      List<Level> levels = new ArrayList<>();
      for (double rate : rates(capacity.throughput(), MULTIPLES)) {
        quiet(stack);
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
   * was still compiling: it spent 1.2 cores on 1,784 calls/s in the capacity run, and 0.7 on 2,642 in the flood
   * after it; on the stand-in, six rounds of 5 s still rose from 357 to 4,283 calls/s. Returns each round's OK
   * calls/s.
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

  /** A process's cores in a measured stretch, "?" where it was not measured. */
  private static String cores(Usage.Measured cpu, String process) {
    Double cores = cpu.coresByProcess().get(process);
    return cores == null ? "?" : ms(cores);
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
    Sampler sampler = Sampler.start(stack);
    Polite polite = Polite.start(caller);
    Flood flood = Flood.start(Op.GET_ORDER.patternId(), a6, rate, settings.overloadLevel(), Overload::outcome);
    long end = flood.awaitSchedule();
    Polite.Result politeResult = polite.stop();
    OptionalLong recovery = recover(caller, end, (long) (ADMITTED_P99_TARGET * unloadedP99 * 1e6));
    boolean drained = flood.awaitAnswers(DRAIN);
    Sampler.Result samples = sampler.stop();
    Usage.Measured cpu = usage.stop();
    Map<String, String> troubles = troubles(stack);
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

  static final String OUT_OF_HEAP = "out of heap (OutOfMemoryError in its log)";

  /** What went wrong with a process of the stack, by name: exited, out of heap, or its metrics port silent. */
  private static Map<String, String> troubles(Stack stack) {
    Map<String, String> troubles = new LinkedHashMap<>();
    for (Proc p : stack.processes()) {
      if (!p.isAlive()) {
        troubles.put(p.name, "exited");
      } else if (p.logged("OutOfMemoryError")) {
        troubles.put(p.name, OUT_OF_HEAP);
      } else if (Scrape.text(p.metricsPort).isEmpty()) {
        troubles.put(p.name, "not answering on its metrics port");
      }
    }
    return troubles;
  }

  /**
   * Waits until neither the gateway nor the order-service holds a slot (the previous load's last calls
   * have ended), at most {@link #DRAIN}, then a second more: each level starts from an idle stack.
   */
  private static void quiet(Stack stack) throws InterruptedException {
    long giveUp = System.nanoTime() + DRAIN.toNanos();
    while (System.nanoTime() < giveUp && (inflight(stack.gateway, GATEWAY_LIMITER) != 0 || inflight(stack.orders, SERVICE_LIMITER) != 0)) {
      Thread.sleep(100);
    }
    Thread.sleep(1000);
  }

  /** Calls holding a slot of {@code limiter}; NaN when the process does not answer (which is not idle). */
  private static double inflight(Proc proc, String limiter) {
    String text = Scrape.text(proc.metricsPort);
    return text.isEmpty() ? Double.NaN : Scrape.sumWhere(text, "admission_inflight", limiter);
  }

  // ---- what each level did ----

  /** A store's run: its route's capacity, unloaded latency, and each level. */
  public record Store(String store, String cores, List<Double> warmUpRounds, double capacity, Summary capacityRun, Usage.Measured capacityCpu, double unloadedRate,
      Summary unloaded, List<Level> levels) {}

  /**
   * One level of load. Latencies in ms, from each request's intended start unless "since sent"; RSS in MB;
   * {@code recoverySeconds} null when A6 had not recovered within {@link #RECOVERY_GIVE_UP}. The refusal
   * times are the processes' own ({@code grpc_server_processing_duration} of GetOrder's RESOURCE_EXHAUSTED
   * answers): the gateway's counts both its refusals and those it forwarded from the order-service.
   * {@code limitTimeline}: seconds since the level's start, then the gateway's limit and calls in flight, and
   * the order-service's.
   */
  public record Level(int multiple, double askedPerSecond, double offeredPerSecond, long sent, double lateP50Ms,
      double lateP99Ms, double lateMaxMs, double goodputPerSecond, double goodputShare, double admittedP50Ms,
      double admittedP99Ms, double admittedP99OverUnloaded, long refused, double refusedP50Ms, double refusedP99Ms,
      double refusedSinceSentP50Ms, double refusedSinceSentP99Ms, Map<String, Long> statuses, long unanswered,
      long politeSent, long politeOk, Map<String, Long> politeStatuses, double politeP99Ms, Map<String, Long> peakRssMb,
      Double recoverySeconds, Limits gatewayLimit, Limits serviceLimit, long rejectedByGateway, long rejectedByService,
      double gatewayRefusalP50Ms, double gatewayRefusalP99Ms, double serviceRefusalP50Ms, double serviceRefusalP99Ms,
      List<List<Double>> limitTimeline, Usage.Measured cpu, Map<String, String> troubles) {

    double politeShare() {
      return politeSent == 0 ? 0 : politeOk / (double) politeSent;
    }

    long peakRss() {
      return peakRssMb.values().stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /** Memory held: every RSS below the target, and no process out of heap (its RSS stays low while it dies). */
    boolean memoryMet() {
      return peakRss() < RSS_TARGET_MB && troubles.values().stream().noneMatch(OUT_OF_HEAP::equals);
    }
  }

  /** A limiter's limit over a level (first, lowest, highest and last sample) and the most calls it held at once. */
  public record Limits(double first, double min, double max, double last, double maxInflight) {

    static Limits of(List<double[]> samples) {
      if (samples.isEmpty()) {
        return new Limits(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
      }
      return new Limits(samples.get(0)[0], samples.stream().mapToDouble(s -> s[0]).min().orElse(Double.NaN),
          samples.stream().mapToDouble(s -> s[0]).max().orElse(Double.NaN), samples.get(samples.size() - 1)[0],
          samples.stream().mapToDouble(s -> s[1]).max().orElse(Double.NaN));
    }

    @Override
    public String toString() {
      return num(first) + " → " + num(last) + " (" + num(min) + "–" + num(max) + "), in flight ≤ " + num(maxInflight);
    }
  }

  /** GetOrder's refusals as the gateway's and the order-service's own gRPC timers counted them, at one moment. */
  private record RefusalTimers(java.util.TreeMap<Double, Double> gateway, java.util.TreeMap<Double, Double> service) {
    private static final String TIMER = "grpc_server_processing_duration_seconds";
    private static final String[] REFUSED = {"method=\"GetOrder\"", "statusCode=\"RESOURCE_EXHAUSTED\""};

    static RefusalTimers scrape(Stack stack) {
      return new RefusalTimers(Scrape.buckets(Scrape.text(stack.gateway.metricsPort), TIMER, REFUSED),
          Scrape.buckets(Scrape.text(stack.orders.metricsPort), TIMER, REFUSED));
    }

    double gatewayMs(RefusalTimers before, double q) {
      return 1000 * Scrape.quantile(before.gateway, gateway, q);
    }

    double serviceMs(RefusalTimers before, double q) {
      return 1000 * Scrape.quantile(before.service, service, q);
    }
  }

  /**
   * Peak RSS of every process of the stack (from /proc) and the two A6 limiters' limit and in-flight calls
   * (from their metrics), sampled on a thread of its own while a level runs.
   */
  private static final class Sampler {
    private final Stack stack;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "overload-sampler");
      t.setDaemon(true);
      return t;
    });
    private final Map<String, Long> peakRss = new ConcurrentHashMap<>();
    private final List<double[]> gateway = new ArrayList<>();
    private final List<double[]> service = new ArrayList<>();
    private final double[] rejectedBefore;
    private final List<List<Double>> timeline = new ArrayList<>();
    private final long started = System.nanoTime();
    private int ticks;

    private Sampler(Stack stack) {
      this.stack = stack;
      this.rejectedBefore = rejected(stack);
    }

    static Sampler start(Stack stack) {
      Sampler sampler = new Sampler(stack);
      sampler.timer.scheduleAtFixedRate(sampler::sample, 0, SAMPLE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
      return sampler;
    }

    private void sample() {
      for (Proc p : stack.processes()) {
        long rss = p.rssBytes();
        if (rss > 0) {
          peakRss.merge(p.name, rss, Math::max);
        }
      }
      if (ticks++ % SCRAPE_EVERY_SAMPLES == 0) {
        String g = Scrape.text(stack.gateway.metricsPort);
        String s = Scrape.text(stack.orders.metricsPort);
        double[] g2 = {Scrape.sumWhere(g, "admission_limit", GATEWAY_LIMITER, A6_ROUTE),
            Scrape.sumWhere(g, "admission_inflight", GATEWAY_LIMITER, A6_ROUTE)};
        double[] s2 = {Scrape.sumWhere(s, "admission_limit", SERVICE_LIMITER, A6_ROUTE),
            Scrape.sumWhere(s, "admission_inflight", SERVICE_LIMITER, A6_ROUTE)};
        synchronized (this) {
          gateway.add(g2);
          service.add(s2);
          timeline.add(List.of(Math.round((System.nanoTime() - started) / 1e8) / 10.0, g2[0], g2[1], s2[0], s2[1]));
        }
      }
    }

    private static double[] rejected(Stack stack) {
      return new double[] {
          Scrape.sumWhere(Scrape.text(stack.gateway.metricsPort), "admission_calls_total", GATEWAY_LIMITER, "outcome=\"rejected\""),
          Scrape.sumWhere(Scrape.text(stack.orders.metricsPort), "admission_calls_total", SERVICE_LIMITER, "outcome=\"rejected\"")};
    }

    public record Result(Map<String, Long> peakRssMb, Limits gateway, Limits service, long rejectedByGateway, long rejectedByService,
        List<List<Double>> timeline) {}

    Result stop() throws InterruptedException {
      timer.shutdown();
      timer.awaitTermination(10, TimeUnit.SECONDS);
      sample();
      double[] rejectedAfter = rejected(stack);
      Map<String, Long> peakMb = new LinkedHashMap<>();
      for (Proc p : stack.processes()) {
        peakMb.put(p.name, peakRss.getOrDefault(p.name, -1L) / (1024 * 1024));
      }
      synchronized (this) {
        return new Result(peakMb, Limits.of(gateway), Limits.of(service),
            (long) (rejectedAfter[0] - rejectedBefore[0]), (long) (rejectedAfter[1] - rejectedBefore[1]), List.copyOf(timeline));
      }
    }
  }

  /**
   * CPU of each process of the stack and of the benchmark itself, how busy the machine was, and how much of
   * that was neither the benchmark nor what it started (other work on a shared machine), over a stretch.
   */
  static final class Usage {
    private static final int CORES = Runtime.getRuntime().availableProcessors();
    private final Map<String, DoubleSupplier> cpu = new LinkedHashMap<>();
    private final Map<String, Double> before = new LinkedHashMap<>();
    private final double oursBefore;
    private final MachineCpu machine;
    private final long started;

    private Usage(Stack stack) {
      stack.processes().forEach(p -> cpu.put(p.name, p::cpuSeconds));
      stack.motoPid().ifPresent(pid -> cpu.put("moto", () -> Proc.cpuSeconds(pid)));
      long self = ProcessHandle.current().pid();
      cpu.put("bench", () -> Proc.cpuSeconds(self));
      cpu.forEach((name, seconds) -> before.put(name, seconds.getAsDouble()));
      this.oursBefore = ours();
      this.machine = MachineCpu.read();
      this.started = System.nanoTime();
    }

    static Usage start(Stack stack) {
      return new Usage(stack);
    }

    /** CPU seconds of this process and every process it started (the stack's JVMs, moto). */
    private static double ours() {
      return Proc.cpuSeconds(ProcessHandle.current().pid())
          + ProcessHandle.current().descendants().mapToDouble(p -> Math.max(0, Proc.cpuSeconds(p.pid()))).sum();
    }

    /**
     * @param coresByProcess CPU seconds per second of the stretch, by process (1.0 is a whole core)
     * @param machineBusy    the share of the machine's CPU time that was busy, every process counted
     * @param othersCores    cores busy with work the benchmark did not start (others' tests, builds)
     */
    public record Measured(double seconds, Map<String, Double> coresByProcess, double machineBusy, double othersCores) {}

    Measured stop() {
      double seconds = (System.nanoTime() - started) / 1e9;
      Map<String, Double> cores = new LinkedHashMap<>();
      cpu.forEach((name, now) -> cores.put(name, (now.getAsDouble() - before.get(name)) / seconds));
      double busy = MachineCpu.read().busySince(machine);
      double others = Math.max(0, busy * CORES - (ours() - oursBefore) / seconds);
      return new Measured(seconds, cores, busy, others);
    }
  }

  /**
   * The polite caller and the recovery probes: a client of its own (its own connection and event loop),
   * as another caller of the gateway would be, not queued behind the flood's answers.
   */
  private static final class Caller implements AutoCloseable {
    private final ManagedChannel channel;
    private final OrderServiceGrpc.OrderServiceStub orders;
    private final DataSet data;

    Caller(String address, DataSet data) {
      this.channel = NettyChannelBuilder.forTarget(address).usePlaintext().build();
      this.orders = OrderServiceGrpc.newStub(channel);
      this.data = data;
    }

    CompletableFuture<?> listCustomerOrders(long i) {
      return GrpcTarget.<dev.warehouse.order.v1.ListCustomerOrdersResponse>unary(o -> orders.withDeadlineAfter(POLITE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
          .listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
              .setCustomerId(DataSet.customer((int) (i % data.customers))).build(), o));
    }

    CompletableFuture<?> getOrder(long i) {
      return GrpcTarget.<dev.warehouse.order.v1.Order>unary(o -> orders.withDeadlineAfter(PROBE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
          .getOrder(GetOrderRequest.newBuilder().setOrderId(DataSet.order((int) (i % data.customers), 0)).build(), o));
    }

    @Override
    public void close() throws InterruptedException {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** A5 every {@link #POLITE_EVERY}, while a level runs: its outcomes and latency. */
  private static final class Polite {
    private final Caller caller;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "overload-polite");
      t.setDaemon(true);
      return t;
    });
    private final Map<String, LongAdder> statuses = new ConcurrentHashMap<>();
    private final AtomicLong sent = new AtomicLong();
    private final List<CompletableFuture<?>> pending = new ArrayList<>();
    private final org.HdrHistogram.Recorder latency = new org.HdrHistogram.Recorder(TimeUnit.MINUTES.toMicros(1), 3);
    private ScheduledFuture<?> schedule;

    private Polite(Caller caller) {
      this.caller = caller;
    }

    static Polite start(Caller caller) {
      Polite polite = new Polite(caller);
      polite.schedule = polite.timer.scheduleAtFixedRate(polite::call, 0, POLITE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
      return polite;
    }

    private void call() {
      long started = System.nanoTime();
      CompletableFuture<?> call = caller.listCustomerOrders(sent.getAndIncrement()).whenComplete((ok, failure) -> {
        statuses.computeIfAbsent(failure == null ? OK : outcome(failure), s -> new LongAdder()).increment();
        if (failure == null) {
          latency.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - started)));
        }
      });
      synchronized (pending) {
        pending.add(call);
      }
    }

    record Result(long sent, long ok, Map<String, Long> statuses, double p99Ms) {}

    /** Stops calling and waits for the answers still due (each has its deadline). */
    Result stop() throws InterruptedException {
      schedule.cancel(false);
      timer.shutdown();
      timer.awaitTermination(5, TimeUnit.SECONDS);
      CompletableFuture<?>[] calls;
      synchronized (pending) {
        calls = pending.toArray(CompletableFuture[]::new);
      }
      CompletableFuture.allOf(calls).exceptionally(t -> null)
          .completeOnTimeout(null, POLITE_DEADLINE.toMillis() * 2, TimeUnit.MILLISECONDS).join();
      Map<String, Long> counts = new TreeMap<>();
      statuses.forEach((status, n) -> counts.put(status, n.sum()));
      // A call that never answered, not even with its deadline, counts as sent and failed.
      return new Result(sent.get(), counts.getOrDefault(OK, 0L), counts,
          Summary.percentile(latency.getIntervalHistogram(), 99));
    }
  }

  // ---- the report ----

  private static void write(Report report, Settings settings, Map<String, Store> stores) {
    report.paragraph("One route flooded through the gateway: A6 (GetOrder) offered at 1, 2, 5 and 10 times what it "
        + "serves, each level for " + settings.overloadLevel().toSeconds() + " s, on moto and on the stand-in DynamoDB, "
        + "with the stack as elsewhere (each process -Xmx256m, the admission settings at their defaults: an adaptive "
        + "limit, Gradient2, between 4 and 500). The route's capacity is what a closed loop of " + CAPACITY_CALLERS
        + " callers gets answered OK per second over " + settings.overloadMeasure().toSeconds() + " s; its unloaded "
        + "latency an open loop at " + (int) (UNLOADED_SHARE * 100) + " % of that. Each level is an open loop that "
        + "sends whatever the answers, latency from each request's intended start (coordinated omission corrected), "
        + "the callers never retrying. Meanwhile a polite caller asks A5 (ListCustomerOrders, the same service) every "
        + POLITE_EVERY.toMillis() + " ms with a " + POLITE_DEADLINE.toSeconds() + " s deadline, on a connection of its "
        + "own; every process's RSS is read every " + SAMPLE_EVERY.toMillis() + " ms; and from the flood's last request, "
        + "A6 is probed every " + PROBE_EVERY.toMillis() + " ms until " + PROBES_IN_A_ROW + " probes in a row answer "
        + "OK within " + num(ADMITTED_P99_TARGET) + " times the unloaded p99 (the bound an admitted call is held to): "
        + "the recovery is the first of those answers. Levels run one after another on one stack, from idle (no slot "
        + "held) each time; the limits carry over, as they would in production. The cores are split with taskset "
        + "(each store's paragraph says how): offered past capacity on a machine it shares with what it measures, an "
        + "open loop takes their cores, and the first run, on shared cores, measured the generator's CPU at 5× on the "
        + "stand-in (the load generator used 1.4–1.6 of the 2 cores, the gateway and the order-service 0.4 between them).");
    for (Store store : stores.values()) {
      writeStore(report, store);
    }
    report.paragraph(whatLimitsIt(stores));
    report.data("overload", stores);
  }

  private static void writeStore(Report report, Store s) {
    report.paragraph("**" + s.store() + "** (" + s.cores() + "): A6 serves " + num(s.capacity()) + " OK calls/s through the gateway ("
        + CAPACITY_CALLERS + " callers, after " + s.warmUpRounds().size() + " warm-up rounds that ended when " + AGREEING_ROUNDS + " in a row agreed within "
        + "10 %: " + s.warmUpRounds().stream().map(Report::num).toList() + "; p50 " + ms(s.capacityRun().p50()) + " ms, " + s.capacityRun().errorCount()
        + " refused or failed " + s.capacityRun().errors() + ", the machine " + percent(s.capacityCpu().machineBusy())
        + " busy, " + ms(s.capacityCpu().othersCores()) + " cores of it with work the benchmark did not start); unloaded, at " + num(s.unloadedRate()) + " calls/s, p50 " + ms(s.unloaded().p50()) + " ms and p99 "
        + ms(s.unloaded().p99()) + " ms (" + s.unloaded().count() + " calls, " + s.unloaded().errorCount() + " errors).");
    List<String> headers = new ArrayList<>(List.of("Target (" + s.store() + ")"));
    s.levels().forEach(l -> headers.add(l.multiple() + "× (" + num(l.askedPerSecond()) + "/s)"));
    List<List<String>> rows = new ArrayList<>();
    rows.add(row("offered calls/s (sent ÷ duration; not a target)", s, l -> num(l.offeredPerSecond())));
    rows.add(row("goodput ≥ " + percent(GOODPUT_TARGET) + " of " + num(s.capacity()) + "/s", s,
        l -> num(l.goodputPerSecond()) + "/s, " + percent(l.goodputShare()) + verdict(l.goodputShare() >= GOODPUT_TARGET)));
    rows.add(row("admitted p99 ≤ " + num(ADMITTED_P99_TARGET) + "× unloaded (" + ms(ADMITTED_P99_TARGET * s.unloaded().p99()) + " ms)", s,
        l -> ms(l.admittedP99Ms()) + " ms, " + num(l.admittedP99OverUnloaded()) + "×"
            + verdict(l.admittedP99OverUnloaded() <= ADMITTED_P99_TARGET)));
    rows.add(row("refusals p50 / p99 ≤ " + num(REJECTION_TARGET_MS) + " ms", s,
        l -> l.refused() == 0 ? "none refused" : ms(l.refusedP50Ms()) + " / " + ms(l.refusedP99Ms()) + " ms"
            + verdict(l.refusedP99Ms() <= REJECTION_TARGET_MS)));
    rows.add(row("polite A5 success ≥ " + percent(POLITE_TARGET), s,
        l -> l.politeOk() + " of " + l.politeSent() + verdict(l.politeShare() >= POLITE_TARGET)));
    rows.add(row("peak RSS < " + RSS_TARGET_MB + " MB (" + String.join(", ", s.levels().get(0).peakRssMb().keySet()) + ")", s,
        l -> String.join(", ", l.peakRssMb().values().stream().map(String::valueOf).toList()) + " MB"
            + (l.troubles().containsValue(OUT_OF_HEAP) ? ", " + l.troubles().entrySet().stream()
                .filter(e -> e.getValue().equals(OUT_OF_HEAP)).map(Map.Entry::getKey).toList() + " out of heap" : "")
            + verdict(l.memoryMet())));
    rows.add(row("A6 normal again ≤ " + num(RECOVERY_TARGET_S) + " s after the flood", s,
        l -> l.recoverySeconds() == null ? "not within " + RECOVERY_GIVE_UP.toSeconds() + " s" + verdict(false)
            : num(l.recoverySeconds()) + " s" + verdict(l.recoverySeconds() <= RECOVERY_TARGET_S)));
    report.table(headers, rows);
    s.levels().stream().filter(l -> !l.troubles().isEmpty()).findFirst().ifPresent(l -> report.paragraph(
        "After " + l.multiple() + "×: " + l.troubles().entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).toList()
            + "; the levels above it were not run on this stack."));

    List<List<String>> detail = new ArrayList<>();
    for (Level l : s.levels()) {
      detail.add(List.of(l.multiple() + "×", l.sent() + " (late p99 " + ms(l.lateP99Ms()) + " ms)",
          statuses(l.statuses()) + (l.unanswered() > 0 ? ", " + l.unanswered() + " unanswered" : ""),
          ms(l.refusedSinceSentP50Ms()) + " / " + ms(l.refusedSinceSentP99Ms()),
          ms(l.gatewayRefusalP50Ms()) + " / " + ms(l.gatewayRefusalP99Ms()) + "; " + ms(l.serviceRefusalP50Ms()) + " / "
              + ms(l.serviceRefusalP99Ms()),
          statuses(l.politeStatuses()) + " (p99 " + ms(l.politeP99Ms()) + " ms)", l.gatewayLimit().toString(), l.serviceLimit().toString(),
          cores(l.cpu())));
    }
    report.table(List.of("Level", "Sent (generator late p99)", "A6 answers", "Refusals since sent p50 / p99 (ms)",
        "Refusals in the gateway; in the order-service p50 / p99 (ms)",
        "Polite A5", "Gateway's limit for A6", "order-service's limit for A6", "CPU (cores) and machine busy"), detail);
  }

  /**
   * What limits each store's figures, from what was measured: the queue the limits let build in a store that
   * serves one call at a time, the CPU the flood and the machine's other work took, and where a refusal's
   * time went.
   */
  static String whatLimitsIt(Map<String, Store> stores) {
    StringBuilder text = new StringBuilder("What limits it: ");
    Store moto = stores.get("moto");
    if (moto != null && !moto.levels().isEmpty()) {
      Level top = moto.levels().get(moto.levels().size() - 1);
      double perCallMs = 1000 / moto.capacity();
      double queued = Math.max(top.gatewayLimit().maxInflight(), top.serviceLimit().maxInflight());
      text.append("on moto, the store. It serves one request at a time, about ").append(ms(perCallMs))
          .append(" ms each at the measured capacity, so an admitted call waits behind every call the limits let in "
              + "before it: during the ").append(top.multiple()).append("× flood the gateway's limit for A6 "
              + "ranged ").append(num(top.gatewayLimit().min())).append("–").append(num(top.gatewayLimit().max()))
          .append(" and the order-service's ").append(num(top.serviceLimit().min())).append("–")
          .append(num(top.serviceLimit().max())).append(", up to ").append(num(queued)).append(" calls in flight, and ")
          .append(num(queued)).append(" × ").append(ms(perCallMs)).append(" ms = ").append(ms(queued * perCallMs))
          .append(" ms, against an admitted p99 of ").append(ms(top.admittedP99Ms()))
          .append(" ms. One or two calls in flight keep moto busy; what the limits admit beyond that is queue. ")
          .append("And moto itself slows as the flood grows: at ").append(top.multiple()).append("× it answered A6 ")
          .append(num(top.goodputPerSecond())).append(" times a second (")
          .append(ms(1000 / Math.max(top.goodputPerSecond(), 1e-9))).append(" ms each, against ").append(ms(perCallMs))
          .append(" at capacity), with ").append(cores(top.cpu(), "moto"))
          .append(" cores, while the load generator on its core used ").append(cores(top.cpu(), "bench"))
          .append(": sending the flood and reading its refusals takes the CPU moto needs. On 2 cores the generator has "
              + "nowhere else to run; a third core (or a second machine) for it is what would measure admission alone. "
              + "The polite caller's calls wait in the same queue (p99 ")
          .append(ms(moto.levels().stream().mapToDouble(Level::politeP99Ms).max().orElse(0)))
          .append(" ms at worst), and one sent while two of its own were still waiting finds its route's share of a full "
              + "limit taken. ");
    }
    Store standIn = stores.get("stand-in");
    if (standIn != null && !standIn.levels().isEmpty()) {
      Level top = standIn.levels().get(standIn.levels().size() - 1);
      double gatewayMicros = top.cpu().coresByProcess().getOrDefault("gateway", 0.0) * 1e6 / top.offeredPerSecond();
      double benchMicros = top.cpu().coresByProcess().getOrDefault("bench", 0.0) * 1e6 / top.offeredPerSecond();
      text.append("On the stand-in, the CPU: the store answers in microseconds, so A6's capacity is what the "
              + "system's cores do for the whole path, and a refusal is cheap but not free. At ").append(top.multiple()).append("× the gateway "
              + "spent ").append(num(gatewayMicros)).append(" µs of CPU per offered call and the load generator (with the "
              + "stand-in) ").append(num(benchMicros)).append(" µs, and the machine was ").append(percent(top.cpu().machineBusy()))
          .append(" busy. ");
    }
    text.append("A refusal's own time in the gateway (its gRPC timer, from the request's headers to the answer) has a "
        + "p50 near a millisecond; its p99, and the callers' p99, are the time its threads waited for a core of a "
        + "machine the flood keeps busy, with other work on it (\"others\" above, in cores). ");
    return text.toString();
  }

  private static List<String> row(String target, Store s, java.util.function.Function<Level, String> cell) {
    List<String> row = new ArrayList<>(List.of(target));
    s.levels().forEach(l -> row.add(cell.apply(l)));
    return row;
  }

  static String verdict(boolean met) {
    return met ? " (met)" : " (**not met**)";
  }

  private static String statuses(Map<String, Long> statuses) {
    List<String> parts = new ArrayList<>();
    statuses.forEach((status, n) -> parts.add(status + " " + n));
    return String.join(", ", parts);
  }

  private static String cores(Usage.Measured cpu) {
    List<String> parts = new ArrayList<>();
    cpu.coresByProcess().forEach((name, cores) -> parts.add(name + " " + ms(cores)));
    return String.join(", ", parts) + "; machine " + percent(cpu.machineBusy()) + ", others " + ms(cpu.othersCores());
  }

  private static String percent(double share) {
    return String.format(java.util.Locale.ROOT, "%.0f %%", share * 100);
  }

  private static void log(String message) {
    System.out.println(java.time.Instant.now().toString().substring(11, 19) + " bench: " + message);
  }
}
