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
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Concurrency limits over one backend, one per route (RPC): Netflix's concurrency-limits, a
 * {@link Gradient2Limit} over one-second windows that follows the route's own latency, or a fixed
 * limit. A limit grows while its route's latency holds and shrinks as calls start to queue. One limit per
 * route keeps one route's flood from starving another, and measures each route against its own latency:
 * one limit shared by all routes read every PlaceOrder (six DynamoDB calls) as a queueing GetOrder (one),
 * and refused PlaceOrders at a fifth of capacity.
 *
 * <p>Past its limit a call waits for a slot ({@link #admit}), parked without a thread: a burst is queued,
 * not refused. The wait is bounded by {@code ADMISSION_MAX_WAIT_MS}, by half the time its caller has left and
 * by the queue's length; past any of them the call is refused. The queue is served first-in-first-out
 * while it drains quickly and last-in-first-out once its oldest call has waited half the longest wait
 * (Facebook's adaptive LIFO): under overload, the calls served are the ones whose callers are still
 * waiting, and the stale ones are refused when their wait ends. Concurrency-limits' blocking limiter is
 * the model of the policy; it parks a thread, and the servers run on {@code directExecutor}.
 *
 * <p>Metrics ({@code limiter}: the process's or the backend's name; {@code route}: the RPC):
 * {@code admission_limit}, {@code admission_inflight}, {@code admission_waiting}, {@code admission_calls_total}
 * by {@code outcome} (success, dropped, ignored, rejected), and {@code admission_wait_seconds} of the calls that
 * waited, by whether they got a slot ({@code admitted}: true or false).
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

  private final Map<String, RouteSlots> limiters = new LinkedHashMap<>();
  private final AdmissionConfig config;
  private final ScheduledExecutorService timer;
  private final LongSupplier nanoClock;

  /**
   * @param name    the {@code limiter} tag of the metrics
   * @param routes  the routes (RPC names) the limiter admits, each with a limit of its own
   * @param timer   ends the waits of calls over the limit; its tasks take microseconds
   */
  public RouteLimiter(String name, List<String> routes, AdmissionConfig config, MeterRegistry meters,
      ScheduledExecutorService timer) {
    this(name, routes, config, meters, timer, System::nanoTime);
  }

  /** The same, timing calls by {@code nanoClock} (tests step it, and the timer with it). */
  RouteLimiter(String name, List<String> routes, AdmissionConfig config, MeterRegistry meters,
      ScheduledExecutorService timer, LongSupplier nanoClock) {
    if (routes.isEmpty()) {
      throw new IllegalArgumentException("a limiter needs at least one route");
    }
    this.config = config;
    this.timer = timer;
    this.nanoClock = nanoClock;
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
      Tags tags = Tags.of("limiter", name, "route", route);
      SimpleLimiter<Void> limiter = SimpleLimiter.newBuilder().named(name + "/" + route).limit(limit).nanoClock(nanoClock)
          .metricRegistry(new Metrics(meters, tags)).build();
      RouteSlots slots = new RouteSlots(limiter, meters, tags);
      limiters.put(route, slots);
      Gauge.builder("admission.inflight", limiter, SimpleLimiter::getInflight)
          .description("calls holding a slot of the route's concurrency limit")
          .tags(tags).strongReference(true).register(meters);
      Gauge.builder("admission.waiting", slots, RouteSlots::waiting)
          .description("calls waiting for a slot of the route's concurrency limit")
          .tags(tags).strongReference(true).register(meters);
    }
  }

  /** A slot for a call of {@code route} now, or empty when the route is at its limit (or calls wait for one). */
  public Optional<Limiter.Listener> acquire(String route) {
    return slots(route).tryAcquire();
  }

  /**
   * A slot for a call of {@code route}: at once when one is free, else when one is given back, within the
   * longest wait and half of {@code timeLeftNanos} (the caller's time; {@link Long#MAX_VALUE} for none).
   * Fails with the route's {@link #refusal} when the wait ends without one, or at once when the queue is full.
   * The future completes on the thread that gave the slot back, or the timer's.
   *
   * @param whoseLimit the refusal's message start, as {@link #refusal} takes it
   * @param more       the refusal's further metadata
   */
  public CompletableFuture<Limiter.Listener> admit(String route, long timeLeftNanos, String whoseLimit,
      Map<String, String> more) {
    return slots(route).admit(Math.min(config.maxWait().toNanos(), timeLeftNanos / 2),
        () -> refusal(route, whoseLimit, more));
  }

  private RouteSlots slots(String route) {
    RouteSlots slots = limiters.get(route);
    if (slots == null) {
      throw new IllegalArgumentException("no limit for route " + route);
    }
    return slots;
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
    return slots(route).limiter.getLimit();
  }

  /** How many calls of {@code route} wait for a slot now. */
  public int waiting(String route) {
    return slots(route).waiting();
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
   * One route's limit and the calls waiting for it. Slots are handed to waiters by whichever thread gives
   * one back, in a drain loop that one thread runs at a time ({@code handing}), so that a waiter whose call
   * ends at once, giving its slot straight back, does not recurse into the next hand-over.
   */
  /**
   * CoDel's rule for the wait: once a route's queue has stood, its oldest call waiting past this target,
   * for {@link #STANDING_INTERVAL} on end, a call that arrives waits at most this long. A burst that drains
   * (a cold stack's first calls, all queued at once) keeps the whole wait; a flood, whose queue never drains,
   * is refused after the target instead of piling calls up for the whole wait in front of the store.
   */
  static final Duration STANDING_TARGET = Duration.ofMillis(100);
  static final Duration STANDING_INTERVAL = Duration.ofSeconds(1);
  private static final long NOT_STANDING = Long.MIN_VALUE;

  private final class RouteSlots {
    private final SimpleLimiter<Void> limiter;
    /** Since when the queue has stood (its oldest call waiting past the target); NOT_STANDING. Guarded by this. */
    private long standingSince = NOT_STANDING;
    /** Guarded by {@code this}. */
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private final AtomicInteger handing = new AtomicInteger();
    private final io.micrometer.core.instrument.Counter rejected;
    private final io.micrometer.core.instrument.Timer admittedWait;
    private final io.micrometer.core.instrument.Timer refusedWait;
    private volatile int waiting;

    RouteSlots(SimpleLimiter<Void> limiter, MeterRegistry meters, Tags tags) {
      this.limiter = limiter;
      // The library's own counter of the same name and tags: one series, whoever refuses.
      this.rejected = io.micrometer.core.instrument.Counter.builder("admission.calls").tags(tags.and("outcome", "rejected"))
          .description("calls by what the limit made of them: success, dropped, ignored, rejected, bypassed")
          .register(meters);
      this.admittedWait = waitTimer(meters, tags, true);
      this.refusedWait = waitTimer(meters, tags, false);
    }

    private io.micrometer.core.instrument.Timer waitTimer(MeterRegistry meters, Tags tags, boolean admitted) {
      return io.micrometer.core.instrument.Timer.builder("admission.wait")
          .description("how long calls over the limit waited for a slot, by whether they got one")
          .tags(tags.and("admitted", Boolean.toString(admitted)))
          .serviceLevelObjectives(Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(250),
              Duration.ofSeconds(1), Duration.ofSeconds(2))
          .register(meters);
    }

    int waiting() {
      return waiting;
    }

    /** A slot now, without waiting and without passing calls that wait. */
    synchronized Optional<Limiter.Listener> tryAcquire() {
      if (!waiters.isEmpty() || limiter.getInflight() >= limiter.getLimit()) {
        rejected.increment();
        return Optional.empty();
      }
      return limiter.acquire(null).map(this::returning);
    }

    CompletableFuture<Limiter.Listener> admit(long waitNanos, Supplier<ResourceExhaustedException> refusal) {
      Waiter waiter;
      synchronized (this) {
        if (waiters.isEmpty() && limiter.getInflight() < limiter.getLimit()) {
          Optional<Limiter.Listener> slot = limiter.acquire(null);
          if (slot.isPresent()) {
            return CompletableFuture.completedFuture(returning(slot.get()));
          }
        }
        long now = nanoClock.getAsLong();
        noteStanding(now);
        long wait = standingSince != NOT_STANDING && now - standingSince >= STANDING_INTERVAL.toNanos()
            ? Math.min(waitNanos, STANDING_TARGET.toNanos()) : waitNanos;
        if (wait <= 0 || waiters.size() >= config.maxQueue()) {
          rejected.increment();
          return CompletableFuture.failedFuture(refusal.get());
        }
        waiter = new Waiter(now, wait);
        waiters.addLast(waiter);
        waiting = waiters.size();
      }
      // Outside the lock: a timer that runs the task at once must not find the lock held.
      waiter.timeout = timer.schedule(() -> giveUp(waiter, refusal), waiter.waitNanos, TimeUnit.NANOSECONDS);
      handOff(); // a slot given back between the check and the queueing
      return waiter;
    }

    private void giveUp(Waiter waiter, Supplier<ResourceExhaustedException> refusal) {
      synchronized (this) {
        if (!waiters.remove(waiter)) {
          return; // handed a slot meanwhile
        }
        waiting = waiters.size();
      }
      rejected.increment();
      refusedWait.record(nanoClock.getAsLong() - waiter.since, TimeUnit.NANOSECONDS);
      waiter.completeExceptionally(refusal.get());
    }

    /** Hands free slots to waiting calls, until none waits or none is free. */
    private void handOff() {
      if (handing.getAndIncrement() != 0) {
        return; // the thread in the loop below looks again
      }
      do {
        while (true) {
          Waiter next;
          Limiter.Listener slot;
          synchronized (this) {
            if (waiters.isEmpty() || limiter.getInflight() >= limiter.getLimit()) {
              break;
            }
            Optional<Limiter.Listener> taken = limiter.acquire(null);
            if (taken.isEmpty()) {
              break;
            }
            slot = taken.get();
            next = nextWaiter();
            waiting = waiters.size();
            noteStanding(nanoClock.getAsLong());
          }
          if (next.timeout != null) {
            next.timeout.cancel(false);
          }
          admittedWait.record(nanoClock.getAsLong() - next.since, TimeUnit.NANOSECONDS);
          if (!next.complete(returning(slot))) {
            slot.onIgnore(); // cannot happen while only giveUp completes it otherwise, under the lock
          }
        }
      } while (handing.decrementAndGet() != 0);
    }

    /** Notes whether the queue stands now: its oldest call has waited past the target (since then, at the latest). */
    private void noteStanding(long now) {
      Waiter oldest = waiters.peekFirst();
      if (oldest == null || now - oldest.since < STANDING_TARGET.toNanos()) {
        standingSince = NOT_STANDING;
      } else if (standingSince == NOT_STANDING) {
        standingSince = oldest.since + STANDING_TARGET.toNanos();
      }
    }

    /**
     * First in, first out while the queue drains; last in, first out once its oldest has waited half the
     * longest wait: then the newest calls, whose callers have the most time left, are served first.
     */
    private Waiter nextWaiter() {
      Waiter oldest = waiters.peekFirst();
      boolean standing = nanoClock.getAsLong() - oldest.since >= oldest.waitNanos / 2;
      return standing ? waiters.pollLast() : waiters.pollFirst();
    }

    /** The slot, handing itself to a waiting call once it is given back. */
    private Limiter.Listener returning(Limiter.Listener slot) {
      return new Limiter.Listener() {
        @Override
        public void onSuccess() {
          slot.onSuccess();
          handOff();
        }

        @Override
        public void onIgnore() {
          slot.onIgnore();
          handOff();
        }

        @Override
        public void onDropped() {
          slot.onDropped();
          handOff();
        }
      };
    }
  }

  /** A call waiting for a slot, since when and for how long at most. */
  private static final class Waiter extends CompletableFuture<Limiter.Listener> {
    final long since;
    final long waitNanos;
    volatile ScheduledFuture<?> timeout;

    Waiter(long since, long waitNanos) {
      this.since = since;
      this.waitNanos = waitNanos;
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
