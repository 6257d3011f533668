package dev.warehouse.bench.scenario.overload;

import static dev.warehouse.bench.scenario.overload.Overload.DRAIN;

import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Scrape;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.order.v1.OrderServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Peak RSS of every process of the stack (from /proc) and the two A6 limiters' limit and in-flight calls
 * (from their metrics), sampled on a thread of its own while a level runs; and, between levels, whether the
 * stack is idle ({@link #quiet}) and what went wrong with its processes ({@link #troubles}).
 */
final class OverloadSampler {

  /** RSS is read this often during a level (from /proc: cheap); the admission metrics every fifth time. */
  static final Duration SAMPLE_EVERY = Duration.ofMillis(100);
  static final int SCRAPE_EVERY_SAMPLES = 5;

  /** The gateway's limits for the order-service's routes, and the order-service's own (its limiter is named after it). */
  static final String GATEWAY_LIMITER = "limiter=\"" + OrderServiceGrpc.SERVICE_NAME + "\"";
  static final String SERVICE_LIMITER = "limiter=\"order-service\"";
  /** The flooded route's own limit: each route has one, and the report follows A6's. */
  static final String A6_ROUTE = "route=\"GetOrder\"";

  static final String OUT_OF_HEAP = "out of heap (OutOfMemoryError in its log)";

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

  private OverloadSampler(Stack stack) {
    this.stack = stack;
    this.rejectedBefore = rejected(stack);
  }

  static OverloadSampler start(Stack stack) {
    OverloadSampler sampler = new OverloadSampler(stack);
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

  /** What went wrong with a process of the stack, by name: exited, out of heap, or its metrics port silent. */
  static Map<String, String> troubles(Stack stack) {
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
   * have ended), at most {@link Overload#DRAIN}, then a second more: each level starts from an idle stack.
   */
  static void quiet(Stack stack) throws InterruptedException {
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
}
