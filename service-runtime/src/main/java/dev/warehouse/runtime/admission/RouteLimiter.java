package dev.warehouse.runtime.admission;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.MetricIds;
import com.netflix.concurrency.limits.MetricRegistry;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limiter.AbstractPartitionedLimiter;
import io.grpc.Status;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A concurrency limit over one backend, shared by its routes: Netflix's concurrency-limits (a
 * {@link Gradient2Limit} that follows the latency, or a fixed limit), partitioned by route so that one
 * route's flood cannot starve another. Below the limit any route may take a slot; at the limit, a
 * route still gets one while it holds less than its equal share. So a flood of one route fills the
 * spare slots, and a polite caller of another route always finds its share free.
 *
 * <p>Metrics ({@code limiter} tag: the process's or the backend's name): {@code admission_limit},
 * {@code admission_route_limit} by {@code route}, {@code admission_inflight}, and
 * {@code admission_calls_total} by {@code outcome} (success, dropped, ignored, rejected).
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

  private final Limiter<String> limiter;
  private final AdmissionConfig config;

  /**
   * @param name    the {@code limiter} tag of the metrics
   * @param routes  the partitions: every route the limiter admits, each with an equal share
   */
  public RouteLimiter(String name, List<String> routes, AdmissionConfig config, MeterRegistry meters) {
    if (routes.isEmpty()) {
      throw new IllegalArgumentException("a limiter needs at least one route");
    }
    this.config = config;
    Limit limit = config.fixedLimit().<Limit>map(FixedLimit::of).orElseGet(() -> Gradient2Limit.newBuilder()
        .initialLimit(Math.min(Math.max(20, config.minLimit()), config.maxLimit()))
        .minLimit(config.minLimit())
        .maxConcurrency(config.maxLimit())
        .build());
    Builder builder = new Builder().named(name).limit(limit).metricRegistry(new Metrics(meters, name))
        .partitionResolver(route -> route);
    double share = 1.0 / routes.size();
    routes.forEach(route -> builder.partition(route, share));
    this.limiter = builder.build();
    Gauge.builder("admission.inflight", limiter, l -> ((AbstractPartitionedLimiter<String>) l).getInflight())
        .description("calls holding a slot of the concurrency limit").tag("limiter", name).strongReference(true)
        .register(meters);
  }

  /** A slot for a call of {@code route}, or empty when the route is over its share and the limit is full. */
  public Optional<Limiter.Listener> acquire(String route) {
    return limiter.acquire(route);
  }

  public AdmissionConfig config() {
    return config;
  }

  /** The limit now. */
  public int limit() {
    return ((AbstractPartitionedLimiter<String>) limiter).getLimit();
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

  private static final class Builder extends AbstractPartitionedLimiter.Builder<Builder, String> {
    @Override
    protected Builder self() {
      return this;
    }
  }

  /**
   * The library's metrics, in Micrometer with Prometheus names. The per-call in-flight distributions are
   * left out: a sample per call, where the in-flight gauge tells the same.
   */
  private static final class Metrics implements MetricRegistry {
    private final MeterRegistry meters;
    private final String name;

    Metrics(MeterRegistry meters, String name) {
      this.meters = meters;
      this.name = name;
    }

    @Override
    public SampleListener distribution(String id, String... tagNameValuePairs) {
      return value -> { };
    }

    @Override
    public void gauge(String id, Supplier<Number> supplier, String... tagNameValuePairs) {
      if (id.equals(MetricIds.LIMIT_NAME)) {
        Gauge.builder("admission.limit", supplier, s -> s.get().doubleValue()).strongReference(true)
            .description("calls the limiter lets work at once").tag("limiter", name).register(meters);
      } else if (id.equals(MetricIds.PARTITION_LIMIT_NAME) && !"unknown".equals(tag(tagNameValuePairs, "partition"))) {
        // Every route is a partition; the library's own "unknown" one is never used.
        Gauge.builder("admission.route.limit", supplier, s -> s.get().doubleValue()).strongReference(true)
            .description("slots a route is sure of when the limit is full")
            .tags(Tags.of("limiter", name, "route", tag(tagNameValuePairs, "partition"))).register(meters);
      }
    }

    @Override
    public MetricRegistry.Counter counter(String id, String... tagNameValuePairs) {
      io.micrometer.core.instrument.Counter counter = io.micrometer.core.instrument.Counter.builder("admission.calls")
          .description("calls by what the limiter made of them: success, dropped, ignored, rejected, bypassed")
          .tags(Tags.of("limiter", name, "outcome", tag(tagNameValuePairs, "status"))).register(meters);
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
