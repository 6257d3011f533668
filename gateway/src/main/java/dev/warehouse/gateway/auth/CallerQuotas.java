package dev.warehouse.gateway.auth;

import dev.warehouse.gateway.auth.QuotaPolicy.Quota;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.error.ResourceExhaustedException.QuotaViolation;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Holds each caller to its quota ({@link QuotaPolicy}): a token bucket of calls (rate and burst) and a share of
 * the calls in flight, per principal (the {@link Caller}'s identity: a token's subject or a certificate's URI
 * SAN). A call past either is refused before the backend hears of it: RESOURCE_EXHAUSTED, reason
 * {@code QUOTA_EXCEEDED}, with a {@code google.rpc.QuotaFailure} naming the caller and its quota and a
 * {@code google.rpc.RetryInfo} of when a call would be let through; the refusal is audited, a read's too.
 * One caller's flood spends its own quota, so a polite caller's calls go on being served.
 *
 * <p>Runs after {@link MethodAuthorization}: only calls the caller may make count. Metrics:
 * {@code gateway_quota_refusals_total{limit}} ({@code rate} or {@code concurrency}; never the caller, an ID).
 */
public final class CallerQuotas implements ServerInterceptor {

  /** What a caller at its concurrency share is told to wait: about one call's time through the gateway. */
  static final Duration CONCURRENCY_RETRY_AFTER = Duration.ofMillis(100);
  /** A caller idle this long, with nothing in flight, is forgotten: its bucket would be full again anyway. */
  static final Duration IDLE = Duration.ofMinutes(1);
  /** How often (in calls) the forgotten callers are looked for. */
  private static final int SWEEP_EVERY = 4096;

  private final QuotaPolicy policy;
  private final AuditTrail audit;
  private final LongSupplier nanoTime;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
  private final Counter rateRefusals;
  private final Counter concurrencyRefusals;
  private final java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();

  public CallerQuotas(QuotaPolicy policy, AuditTrail audit, MeterRegistry meters) {
    this(policy, audit, meters, System::nanoTime);
  }

  CallerQuotas(QuotaPolicy policy, AuditTrail audit, MeterRegistry meters, LongSupplier nanoTime) {
    this.policy = policy;
    this.audit = audit;
    this.nanoTime = nanoTime;
    this.rateRefusals = refusals(meters, "rate");
    this.concurrencyRefusals = refusals(meters, "concurrency");
  }

  private static Counter refusals(MeterRegistry meters, String limit) {
    return Counter.builder("gateway.quota.refusals").description("calls refused for their caller's quota, by which limit")
        .tag("limit", limit).register(meters);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    Optional<Caller> caller = Caller.current();
    if (caller.isEmpty() || CallerAuthentication.OPEN_SERVICES.contains(call.getMethodDescriptor().getServiceName())) {
      return next.startCall(call, headers);
    }
    String identity = caller.get().identity();
    Optional<Quota> quota = policy.of(identity);
    if (quota.isEmpty()) {
      return next.startCall(call, headers);
    }
    long now = nanoTime.getAsLong();
    sweepNow(now);
    Bucket bucket = buckets.computeIfAbsent(identity, id -> new Bucket(quota.get(), now));
    Optional<ResourceExhaustedException> refused = bucket.take(now, identity);
    if (refused.isPresent()) {
      (refused.get().metadata().get("limit").equals("rate") ? rateRefusals : concurrencyRefusals).increment();
      StatusRuntimeException status = GrpcErrors.toStatusException(refused.get());
      audit.refused(call, caller.get(), status.getStatus(), status.getTrailers());
      call.close(status.getStatus(), status.getTrailers());
      return new ServerCall.Listener<>() { };
    }
    AtomicBoolean ended = new AtomicBoolean();
    Runnable end = () -> {
      if (ended.compareAndSet(false, true)) {
        bucket.end();
      }
    };
    ServerCall<Q, R> counted = new SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        end.run();
        super.close(status, trailers);
      }
    };
    return new SimpleForwardingServerCallListener<>(next.startCall(counted, headers)) {
      @Override
      public void onCancel() {
        end.run();
        super.onCancel();
      }
    };
  }

  /** Now and then, forgets the callers idle for {@link #IDLE}: the map holds the active ones only. */
  private void sweepNow(long now) {
    if (calls.incrementAndGet() % SWEEP_EVERY != 0) {
      return;
    }
    for (Iterator<Map.Entry<String, Bucket>> it = buckets.entrySet().iterator(); it.hasNext(); ) {
      if (it.next().getValue().idleSince(now, IDLE.toNanos())) {
        it.remove();
      }
    }
  }

  /** Callers with a bucket now (tests). */
  int tracked() {
    return buckets.size();
  }

  /** One caller's tokens and calls in flight. */
  private static final class Bucket {
    private final Quota quota;
    private double tokens;
    private long filledAt;
    private int inFlight;

    Bucket(Quota quota, long now) {
      this.quota = quota;
      this.tokens = quota.burst();
      this.filledAt = now;
    }

    synchronized Optional<ResourceExhaustedException> take(long now, String identity) {
      tokens = Math.min(quota.burst(), tokens + (now - filledAt) * quota.rate() / TimeUnit.SECONDS.toNanos(1));
      filledAt = now;
      if (inFlight >= quota.concurrency()) {
        return Optional.of(refusal(identity, "concurrency", CONCURRENCY_RETRY_AFTER,
            identity + " has " + inFlight + " calls in flight, its share"));
      }
      if (tokens < 1) {
        long waitNanos = (long) Math.ceil((1 - tokens) * TimeUnit.SECONDS.toNanos(1) / quota.rate());
        return Optional.of(refusal(identity, "rate", Duration.ofNanos(Math.max(waitNanos, TimeUnit.MILLISECONDS.toNanos(1))),
            identity + " sent more calls than its rate"));
      }
      tokens -= 1;
      inFlight++;
      return Optional.empty();
    }

    synchronized void end() {
      inFlight--;
    }

    synchronized boolean idleSince(long now, long idleNanos) {
      return inFlight == 0 && now - filledAt >= idleNanos;
    }

    private ResourceExhaustedException refusal(String identity, String limit, Duration retryAfter, String what) {
      return new ResourceExhaustedException("QUOTA_EXCEEDED",
          what + " (" + quota.describe() + "); retry after " + Math.max(1, retryAfter.toMillis()) + " ms",
          Map.of("limit", limit, "retry_after_ms", Long.toString(Math.max(1, retryAfter.toMillis()))), retryAfter,
          new QuotaViolation("caller:" + identity, quota.describe()));
    }
  }
}
