package dev.warehouse.runtime.peer;

import dev.warehouse.runtime.error.DeadlineExceededException;
import dev.warehouse.runtime.error.UnavailableException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.IllegalStateTransitionException;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.micrometer.tagged.TaggedRetryMetrics;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The one client layer of calls from one of our services to another (the gateway's to its backends, the
 * order-service's to the inventory), as {@code DynamoCalls} is of calls to DynamoDB: a resilience4j
 * {@link Retry} and {@link CircuitBreaker}, one budget, one account of what failed.
 *
 * <ul>
 *   <li><b>Budget.</b> A call carries its caller's deadline, less a reserve to answer in (a tenth, at most
 *       {@link #ANSWER_RESERVE}), and its cancellation (it is made in the caller's {@link Context}); one made
 *       without a deadline gets the default. So a peer that is silent is answered for by this service, with its
 *       own status, before its caller gives up: the caller's breaker does not blame this service for its peer. A caller whose deadline leaves less
 *       than the minimum is refused at once, DEADLINE_EXCEEDED {@code DEADLINE_TOO_SHORT}, before the breaker
 *       is asked, so no caller's short deadline can open the circuit for the others.
 *   <li><b>Retries.</b> Only a failure of the transport (UNAVAILABLE without our {@code ErrorInfo}: no instance
 *       reached, a reset, a connection closed under the call) of a call the contract declares safe to repeat,
 *       at most {@link #MAX_ATTEMPTS} attempts with jittered backoff, and only while the longest backoff and the
 *       minimum budget still fit before the deadline. Whatever the peer answered itself (its contention ABORTED,
 *       its database's UNAVAILABLE) was retried in its own layer: each failure is retried at one layer only.
 *   <li><b>Breaker.</b> It counts the peer's own failures only: unreachable, or silent past the deadline of a
 *       call that had a fair budget. Every answer the peer gave is a success; a caller that left before its
 *       deadline is neither (ignored). A peer the channel reaches again ({@link #observe}) gets its trial calls
 *       a second after the circuit opened, not after the whole open time: a short outage costs no more.
 *   <li><b>Codes.</b> A call cancelled because its caller's deadline passed ends DEADLINE_EXCEEDED, never
 *       CANCELLED. Refusals made here carry our {@code ErrorInfo}: {@code DEADLINE_TOO_SHORT},
 *       {@code BACKEND_CIRCUIT_OPEN}.
 *   <li><b>Metrics.</b> the breaker's ({@code resilience4j_circuitbreaker_*{name}}), the retry's
 *       ({@code resilience4j_retry_calls_total{name}}) and {@code peer_call_retries_total{peer,method}}.
 * </ul>
 */
public final class PeerCalls {

  /** Attempts of one call, first try included. */
  public static final int MAX_ATTEMPTS = 3;
  /** The most of a caller's deadline kept back from a call to a peer, to answer the caller in. */
  public static final Duration ANSWER_RESERVE = Duration.ofMillis(100);
  /** How long a reachable peer's circuit stays open before trial calls (see {@link #observe}). */
  public static final Duration REACHABLE_TRIAL_AFTER = Duration.ofSeconds(1);
  /** First backoff; doubled each retry, ±50 % jitter. */
  public static final Duration INITIAL_BACKOFF = Duration.ofMillis(20);

  private final String peer;
  private final CircuitBreaker breaker;
  private final Retry retry;
  private final ScheduledExecutorService scheduler;
  private final Set<String> retryable;
  private final Duration defaultDeadline;
  private final long minBudgetNanos;
  private final boolean waitForReady;
  private final Runnable reconnect;
  private final MeterRegistry meters;
  private final GrpcErrors.Prepared circuitOpen;
  private final Map<String, Counter> retries = new ConcurrentHashMap<>();
  /** When the circuit last opened (System.nanoTime). */
  private volatile long openedAt;

  /**
   * @param peer            the called service's name (the breaker's and the retry's, in logs and metrics)
   * @param retryable       full method names the contract declares safe to repeat
   * @param defaultDeadline for calls made without one
   * @param minBudget       the least time left before the caller's deadline with which a call is made at all
   * @param waitForReady    whether a call waits, within its deadline, for an instance to be reachable (a restart
   *                        then delays calls instead of failing them) rather than failing at once
   * @param reconnect       asked to reconnect now, not after the channels' growing backoff, when the transport failed
   * @param scheduler       where backoffs wait (its tasks only start calls)
   */
  public PeerCalls(String peer, CircuitBreaker breaker, Set<String> retryable, Duration defaultDeadline,
      Duration minBudget, boolean waitForReady, Runnable reconnect, ScheduledExecutorService scheduler,
      MeterRegistry meters) {
    this.peer = peer;
    this.breaker = breaker;
    this.retryable = retryable;
    this.defaultDeadline = defaultDeadline;
    this.minBudgetNanos = minBudget.toNanos();
    this.waitForReady = waitForReady;
    this.reconnect = reconnect;
    this.scheduler = scheduler;
    this.meters = meters;
    RetryRegistry registry = RetryRegistry.of(RetryConfig.custom()
        .maxAttempts(MAX_ATTEMPTS)
        .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(INITIAL_BACKOFF, 2.0, 0.5))
        // An attempt's failure reaches the retry wrapped by the stage that threw it.
        .retryOnException(failure -> unwrapOnce(failure) instanceof TryAgain)
        .build());
    this.retry = registry.retry(peer);
    TaggedRetryMetrics.ofRetryRegistry(registry).bindTo(meters);
    breaker.getEventPublisher().onStateTransition(event -> {
      if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
        openedAt = System.nanoTime();
      }
    });
    this.circuitOpen = GrpcErrors.prepare(new UnavailableException("BACKEND_CIRCUIT_OPEN",
        peer + " is unavailable; failing fast while its circuit is open", Map.of("service", peer)));
  }

  /**
   * A breaker for one peer: count-based over {@code window} calls, open once half of at least {@code minCalls}
   * failed, for {@code openFor}, then two trial calls decide.
   */
  public static CircuitBreakerConfig breakerConfig(int window, int minCalls, Duration openFor) {
    return CircuitBreakerConfig.custom()
        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        .slidingWindowSize(window)
        .minimumNumberOfCalls(minCalls)
        .failureRateThreshold(50)
        .waitDurationInOpenState(openFor)
        .permittedNumberOfCallsInHalfOpenState(2)
        .automaticTransitionFromOpenToHalfOpenEnabled(true)
        .ignoreException(CallerLeft.class::isInstance)
        .build();
  }

  public String peer() {
    return peer;
  }

  public CircuitBreaker circuitBreaker() {
    return breaker;
  }

  public Retry retry() {
    return retry;
  }

  /**
   * One unary call in the caller's context, on the channel {@code channels} gives for each attempt. The result
   * completes in the caller's context with the answer, or fails with the {@link StatusRuntimeException} the
   * caller should see: the peer's, the transport's, or a refusal made here ({@link #notSent} tells which).
   */
  public <Q, R> CompletableFuture<R> call(Supplier<Channel> channels, MethodDescriptor<Q, R> method, Q request) {
    Context context = Context.current();
    Deadline callers = context.getDeadline();
    if (callers != null && callers.timeRemaining(TimeUnit.NANOSECONDS) < minBudgetNanos) {
      return CompletableFuture.failedFuture(deadlineTooShort(callers));
    }
    if (!breaker.tryAcquirePermission()) {
      return CompletableFuture.failedFuture(new NotSent(circuitOpen.exception()));
    }
    Deadline budget = callers != null ? withAnswerReserve(callers)
        : Deadline.after(defaultDeadline.toNanos(), TimeUnit.NANOSECONDS);
    CallOptions options = CallOptions.DEFAULT.withDeadline(budget);
    CallOptions callOptions = waitForReady ? options.withWaitForReady() : options;
    int attempts = retryable.contains(method.getFullMethodName()) ? MAX_ATTEMPTS : 1;
    long started = System.nanoTime();
    int[] made = {0};
    CompletableFuture<R> result = new CompletableFuture<>();
    retry.executeCompletionStage(scheduler,
            () -> attempt(context, channels, method, callOptions, request, budget, attempts, ++made[0]))
        .whenComplete((value, thrown) -> {
          Throwable failure = thrown == null ? null : unwrap(thrown);
          account(context, budget, failure, System.nanoTime() - started);
          context.run(() -> {
            if (failure == null) {
              result.complete(value);
            } else {
              result.completeExceptionally(failure);
            }
          });
        });
    return result;
  }

  private <Q, R> CompletionStage<R> attempt(Context context, Supplier<Channel> channels, MethodDescriptor<Q, R> method,
      CallOptions options, Q request, Deadline budget, int attempts, int number) {
    if (number > 1) {
      retries.computeIfAbsent(method.getBareMethodName(), name -> Counter.builder("peer.call.retries")
          .description("calls to another of our services tried again after the transport failed")
          .tag("peer", peer).tag("method", name).register(meters)).increment();
    }
    CompletableFuture<R> answer = new CompletableFuture<>();
    // In the caller's context: the call inherits its deadline and cancellation.
    context.run(() -> ClientCalls.asyncUnaryCall(channels.get().newCall(method, options), request,
        new StreamObserver<R>() {
          private R value;

          @Override
          public void onNext(R received) {
            value = received;
          }

          @Override
          public void onError(Throwable received) {
            answer.completeExceptionally(received);
          }

          @Override
          public void onCompleted() {
            answer.complete(value);
          }
        }));
    return answer.handle((value, received) -> {
      if (received == null) {
        return value;
      }
      Throwable failure = GrpcErrors.pastDeadline(asTransportFailure(received), budget);
      boolean unreachable = Status.fromThrowable(failure).getCode() == Status.Code.UNAVAILABLE
          && !GrpcErrors.answeredByService(failure);
      if (unreachable) {
        reconnect.run();
      }
      if (unreachable && number < attempts && !context.isCancelled() && roomForAnother(budget, number)) {
        throw new TryAgain(failure);
      }
      throw new Final(failure);
    });
  }

  private static Deadline withAnswerReserve(Deadline callers) {
    long remaining = callers.timeRemaining(TimeUnit.NANOSECONDS);
    return callers.offset(-Math.min(ANSWER_RESERVE.toNanos(), remaining / 10), TimeUnit.NANOSECONDS);
  }

  /**
   * A connectivity check's finding (every half second or so). A failing connection is retried now rather than
   * after the channel's growing backoff. A peer the channel reaches gets its trial calls once its circuit has
   * been open {@link #REACHABLE_TRIAL_AFTER}, not after the whole open time: calls that timed out while it
   * restarted open the circuit after it is back, and its open time outlasted the orders' step grace. A peer
   * that is connected but silent (frozen) then holds at most the trial calls at a time; one that cannot be
   * reached waits out the open time.
   */
  public void observe(ConnectivityState state) {
    observe(state, System.nanoTime());
  }

  void observe(ConnectivityState state, long nowNanos) {
    if (state == ConnectivityState.TRANSIENT_FAILURE) {
      reconnect.run();
    } else if (state == ConnectivityState.READY && breaker.getState() == CircuitBreaker.State.OPEN
        && nowNanos - openedAt >= REACHABLE_TRIAL_AFTER.toNanos()) {
      try {
        breaker.transitionToHalfOpenState();
      } catch (IllegalStateTransitionException raced) {
        // it moved on by itself meanwhile
      }
    }
  }

  /** What the breaker learns of a finished call. */
  private void account(Context context, Deadline budget, Throwable failure, long elapsedNanos) {
    if (failure == null) {
      breaker.onSuccess(elapsedNanos, TimeUnit.NANOSECONDS);
    } else if (context.isCancelled() && !budget.isExpired()) {
      // The caller left: nothing learnt about the peer. Ignored, so it shows as such in the breaker's metrics.
      breaker.onError(elapsedNanos, TimeUnit.NANOSECONDS, CallerLeft.INSTANCE);
    } else if (countsAgainstPeer(failure)) {
      breaker.onError(elapsedNanos, TimeUnit.NANOSECONDS, failure);
    } else {
      breaker.onSuccess(elapsedNanos, TimeUnit.NANOSECONDS);
    }
  }

  /**
   * Unreachable, or silent past the deadline: the peer's own failures. What it answered (contention, refusals,
   * its database's failures) never counts against it.
   */
  static boolean countsAgainstPeer(Throwable failure) {
    Status.Code code = Status.fromThrowable(failure).getCode();
    return (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED)
        && !GrpcErrors.answeredByService(failure);
  }

  /** Whether another attempt, after the longest backoff it may wait, would still have the minimum budget. */
  private boolean roomForAnother(Deadline budget, int attemptsMade) {
    long longestBackoff = (long) (INITIAL_BACKOFF.toNanos() * Math.pow(2, attemptsMade - 1) * 1.5);
    return budget.timeRemaining(TimeUnit.NANOSECONDS) >= longestBackoff + minBudgetNanos;
  }

  private NotSent deadlineTooShort(Deadline callers) {
    long minMs = TimeUnit.NANOSECONDS.toMillis(minBudgetNanos);
    long leftMs = Math.max(0, callers.timeRemaining(TimeUnit.MILLISECONDS));
    return new NotSent(GrpcErrors.toStatusException(new DeadlineExceededException("DEADLINE_TOO_SHORT",
        "the call's deadline leaves " + leftMs + " ms; a call to " + peer + " is made only with at least " + minMs
            + " ms left",
        Map.of("remaining_ms", Long.toString(leftMs), "min_forward_budget_ms", Long.toString(minMs)))));
  }

  /** Whether a call's failure is a refusal made here, before anything was sent to the peer. */
  public static boolean notSent(Throwable failure) {
    return failure instanceof NotSent;
  }

  /**
   * A connection that closes under a call: grpc-java reports it as UNAVAILABLE in plaintext, but over TLS, when
   * the close meets the call's write, as UNKNOWN "channel closed" (grpc-java issue 10120). Both are the transport
   * failing, not the peer answering: this makes the second UNAVAILABLE too. Only our client's own failure carries
   * the closed channel as its cause; an UNKNOWN that a peer sent has none, and is passed on as it came.
   */
  public static Throwable asTransportFailure(Throwable failure) {
    Status status = Status.fromThrowable(failure);
    if (status.getCode() != Status.Code.UNKNOWN) {
      return failure;
    }
    for (Throwable cause = status.getCause(); cause != null; cause = cause.getCause()) {
      if (cause instanceof ClosedChannelException) {
        return Status.UNAVAILABLE.withDescription("the connection to the backend closed").withCause(cause)
            .asRuntimeException();
      }
    }
    return failure;
  }

  private static Throwable unwrap(Throwable thrown) {
    Throwable failure = unwrapOnce(thrown);
    return failure instanceof Outcome outcome ? outcome.failure : failure;
  }

  private static Throwable unwrapOnce(Throwable thrown) {
    return thrown instanceof CompletionException && thrown.getCause() != null ? thrown.getCause() : thrown;
  }

  /** A refusal made here: its status and trailers as a peer's would be. */
  private static final class NotSent extends StatusRuntimeException {
    private static final long serialVersionUID = 1L;

    NotSent(StatusRuntimeException refusal) {
      super(refusal.getStatus(), refusal.getTrailers());
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  /** What the breaker is told of a call whose caller left before its deadline: ignored, as nothing was learnt. */
  private static final class CallerLeft extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final CallerLeft INSTANCE = new CallerLeft();

    CallerLeft() {
      super("the caller cancelled", null, false, false);
    }
  }

  /** An attempt's failure, on its way through the retry: tried again, or final. */
  private abstract static class Outcome extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient Throwable failure;

    Outcome(Throwable failure) {
      super(null, null, false, false);
      this.failure = failure;
    }
  }

  private static final class TryAgain extends Outcome {
    private static final long serialVersionUID = 1L;

    TryAgain(Throwable failure) {
      super(failure);
    }
  }

  private static final class Final extends Outcome {
    private static final long serialVersionUID = 1L;

    Final(Throwable failure) {
      super(failure);
    }
  }
}
