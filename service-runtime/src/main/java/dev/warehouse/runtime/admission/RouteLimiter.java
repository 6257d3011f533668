package dev.warehouse.runtime.admission;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.MetricIds;
import com.netflix.concurrency.limits.MetricRegistry;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.WindowedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import io.grpc.Status;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Concurrency limits over one backend, one per route (RPC): Netflix's concurrency-limits, a
 * {@link Gradient2Limit} over one-second windows that follows the route's own latency, or a fixed
 * limit. A limit grows while its route's latency holds and shrinks as calls start to queue; past it, a
 * call is refused at once. One limit per route keeps one route's flood from starving another, and
 * measures each route against its own latency: one limit shared by all routes read every PlaceOrder
 * (six DynamoDB calls) as a queueing GetOrder (one), and refused PlaceOrders at a fifth of capacity.
 *
 * <p>Metrics ({@code limiter}: the process's or the backend's name; {@code route}: the RPC):
 * {@code admission_limit}, {@code admission_inflight}, and {@code admission_calls_total} by
 * {@code outcome} (success, dropped, ignored, rejected).
 */
public final class RouteLimiter {

  /** What a finished call tells the limit about the backend. */
  public enum Outcome {
    /** The backend answered: its latency is a sample of the limit's. */
    SUCCESS,
    /** The backend failed or timed out: a sign of overload. */
    DROPPED,
    /** Nothing learnt (the caller cancelled): the slot is given back, no sample is taken. */
    IGNORED
  }

  /** How much a route's latency may grow over its no-load latency before its limit shrinks. */
  static final double RTT_TOLERANCE = 2.0;

  private final Map<String, SimpleLimiter<Void>> limiters = new LinkedHashMap<>();
  private final AdmissionConfig config;

  /**
   * @param name    the {@code limiter} tag of the metrics
   * @param routes  the routes (RPC names) the limiter admits, each with a limit of its own
   */
  public RouteLimiter(String name, List<String> routes, AdmissionConfig config, MeterRegistry meters) {
    this(name, routes, config, meters, System::nanoTime);
  }

  /** The same, timing calls by {@code nanoClock} (tests step it). */
  RouteLimiter(String name, List<String> routes, AdmissionConfig config, MeterRegistry meters, LongSupplier nanoClock) {
    if (routes.isEmpty()) {
      throw new IllegalArgumentException("a limiter needs at least one route");
    }
    this.config = config;
    for (String route : routes) {
      Limit limit = config.fixedLimit().<Limit>map(FixedLimit::of).orElseGet(() -> WindowedLimit.newBuilder()
          .build(Gradient2Limit.newBuilder()
              .initialLimit(Math.min(Math.max(20, config.minLimit()), config.maxLimit()))
              .minLimit(config.minLimit())
              .maxConcurrency(config.maxLimit())
              // Queueing may double a route's latency before its limit shrinks (the library's default is 1.5):
              // admitted calls are held to a p99 within 3 times the unloaded one, and in the overload
              // benchmark's first run, at 1.5, moto offered exactly its capacity was refused a fifth of it.
              .rttTolerance(RTT_TOLERANCE)
              .build()));
      SimpleLimiter<Void> limiter = SimpleLimiter.newBuilder().named(name + "/" + route).limit(limit).nanoClock(nanoClock)
          .metricRegistry(new Metrics(meters, Tags.of("limiter", name, "route", route))).build();
      limiters.put(route, limiter);
      Gauge.builder("admission.inflight", limiter, SimpleLimiter::getInflight)
          .description("calls holding a slot of the route's concurrency limit")
          .tags(Tags.of("limiter", name, "route", route)).strongReference(true).register(meters);
    }
  }

  /** A slot for a call of {@code route}, or empty when the route is at its limit. */
  public Optional<Limiter.Listener> acquire(String route) {
    SimpleLimiter<Void> limiter = limiters.get(route);
    if (limiter == null) {
      throw new IllegalArgumentException("no limit for route " + route);
    }
    return limiter.acquire(null);
  }

  /**
   * The refusal of a call of {@code route} over its limit, the same wherever it is refused: RESOURCE_EXHAUSTED,
   * reason OVERLOADED, metadata {@code route} and {@code retry_after_ms} (and {@code more}), with the retry hint.
   *
   * @param whoseLimit what is at its limit, the message's start ("the service is at its concurrency limit")
   */
  public ResourceExhaustedException refusal(String route, String whoseLimit, Map<String, String> more) {
    long retryMs = config.retryAfter().toMillis();
    Map<String, String> metadata = new LinkedHashMap<>(more);
    metadata.put("route", route);
    metadata.put("retry_after_ms", Long.toString(retryMs));
    return new ResourceExhaustedException("OVERLOADED", whoseLimit + "; retry after " + retryMs + " ms", metadata,
        config.retryAfter());
  }

  /** The limit of {@code route} now. */
  public int limit(String route) {
    return limiters.get(route).getLimit();
  }

  /**
   * What a call's status says about its backend. Answers about the data or the request (NOT_FOUND,
   * INVALID_ARGUMENT, ABORTED ...) are the backend working; a timeout, an unavailable or throttled store
   * and an internal error are overload or failure; a cancellation says nothing.
   */
  public static Outcome outcomeOf(Status.Code code) {
    return switch (code) {
      case CANCELLED -> Outcome.IGNORED;
      case DEADLINE_EXCEEDED, UNAVAILABLE, RESOURCE_EXHAUSTED, INTERNAL, UNKNOWN, DATA_LOSS -> Outcome.DROPPED;
      default -> Outcome.SUCCESS;
    };
  }

  /** Tells the limit how a call ended and gives its slot back. */
  public static void release(Limiter.Listener slot, Outcome outcome) {
    switch (outcome) {
      case SUCCESS -> slot.onSuccess();
      case DROPPED -> slot.onDropped();
      case IGNORED -> slot.onIgnore();
    }
  }

  /**
   * The library's metrics, in Micrometer with Prometheus names: the limit and the calls by outcome. Its
   * per-call distributions (in flight, latency samples) are left out: a sample per call, where the
   * in-flight gauge tells the same.
   */
  private static final class Metrics implements MetricRegistry {
    private final MeterRegistry meters;
    private final Tags tags;

    Metrics(MeterRegistry meters, Tags tags) {
      this.meters = meters;
      this.tags = tags;
    }

    @Override
    public SampleListener distribution(String id, String... tagNameValuePairs) {
      return value -> { };
    }

    @Override
    public void gauge(String id, Supplier<Number> supplier, String... tagNameValuePairs) {
      if (id.equals(MetricIds.LIMIT_NAME)) {
        Gauge.builder("admission.limit", supplier, s -> s.get().doubleValue()).strongReference(true)
            .description("calls the route's limit lets work at once").tags(tags).register(meters);
      }
    }

    @Override
    public MetricRegistry.Counter counter(String id, String... tagNameValuePairs) {
      io.micrometer.core.instrument.Counter counter = io.micrometer.core.instrument.Counter.builder("admission.calls")
          .description("calls by what the limit made of them: success, dropped, ignored, rejected, bypassed")
          .tags(tags.and("outcome", tag(tagNameValuePairs, "status"))).register(meters);
      return counter::increment;
    }

    private static String tag(String[] pairs, String key) {
      for (int i = 0; i + 1 < pairs.length; i += 2) {
        if (pairs[i].equals(key)) {
          return pairs[i + 1];
        }
      }
      return "none";
    }
  }
}
