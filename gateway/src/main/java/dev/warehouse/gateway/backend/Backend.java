package dev.warehouse.gateway.backend;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import com.netflix.concurrency.limits.Limiter;
import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.runtime.admission.RouteLimiter;
import dev.warehouse.runtime.discovery.BackendInstances;
import dev.warehouse.runtime.discovery.BackendServiceConfig;
import dev.warehouse.runtime.discovery.EventLoops;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.netty.channel.EventLoop;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingClientInterceptor;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One backend service (say, the inventory-service) behind the gateway: channels balancing over its
 * current instances ({@link BackendInstances}), one per gateway I/O thread, a concurrency limit that
 * refuses at once what the backend cannot serve at low latency ({@link RouteLimiter}: adaptive, one per
 * method, so that one method's flood leaves the others theirs), and a circuit breaker that
 * fails calls fast while the whole service is down. The limit is for a busy backend, the breaker for a
 * failing one: a backend's own refusal (RESOURCE_EXHAUSTED) is an answer, never a failure, to the breaker.
 *
 * <p>The breaker hears only of what is the backend's fault, so that no caller can open the circuit
 * for the others:
 * <ul>
 *   <li>Not forwarded, not recorded: a call whose deadline leaves less than the minimum forward
 *       budget fails at once with DEADLINE_EXCEEDED ({@code DEADLINE_TOO_SHORT}), before asking the
 *       breaker for a permission. So every forwarded call has a fair budget: the caller's deadline
 *       with at least the minimum left, or the gateway's default deadline; a retry, too, is made
 *       only while the minimum is left.
 *   <li>Failures: UNAVAILABLE (no instance reachable), and the deadline passing without an answer:
 *       DEADLINE_EXCEEDED, or the caller's cancellation arriving once its deadline has passed (a
 *       client cancels when its own timer fires, which can reach us before our timer has run).
 *   <li>Ignored (neither failure nor success; a half-open circuit gets its trial permit back): the
 *       caller cancelling before its deadline, or the gateway shutting down. A client's cancellation
 *       at its own deadline can arrive a little before ours (its deadline started counting before
 *       its request reached us); such a timeout is then ignored, never counted as a success, so a
 *       slow backend still opens the circuit, on the timeouts that are counted.
 *   <li>Successes: every answer of the backend, errors about data (NOT_FOUND ...) included.
 * </ul>
 */
public final class Backend implements AutoCloseable {

  /**
   * What the breaker is told of a call the caller ended: its config must ignore this exception
   * ({@code CircuitBreakerConfig.Builder.ignoreExceptions}), so the call is recorded as ignored.
   */
  public static final class CallerCancellation extends RuntimeException {
    private CallerCancellation() {
      super("the caller cancelled the call before its deadline", null, false, false);
    }
  }

  private static final CallerCancellation CALLER_CANCELLATION = new CallerCancellation();

  private final String serviceName;
  private final List<EventLoop> loops = new ArrayList<>();
  private final List<ManagedChannel> channels;
  private final CircuitBreaker circuitBreaker;
  private final Duration defaultDeadline;
  private final long minForwardBudgetNanos;
  private final Set<String> retryable;
  private final RouteLimiter limiter;
  /** Each method's refusal at its limit, built at its first. */
  private final ConcurrentHashMap<String, GrpcErrors.Prepared> overloaded = new ConcurrentHashMap<>();

  /**
   * @param instances         the service's instances, which the channels follow as they change
   * @param circuitBreaker    must ignore {@link CallerCancellation}
   * @param admission         the settings of the backend's concurrency limits, one per method
   * @param minForwardBudget  the least time left before a caller's deadline with which a call is forwarded
   * @param credentials       how the channels to the instances are secured
   */
  public Backend(com.google.protobuf.Descriptors.ServiceDescriptor service, BackendInstances instances,
      CircuitBreaker circuitBreaker, AdmissionConfig admission, Duration defaultDeadline, Duration minForwardBudget,
      MeterRegistry meters,
      EventLoopGroup eventLoops, ChannelCredentials credentials) {
    if (!circuitBreaker.getCircuitBreakerConfig().getIgnoreExceptionPredicate().test(CALLER_CANCELLATION)) {
      throw new IllegalArgumentException("circuit breaker " + circuitBreaker.getName() + " must ignore "
          + CallerCancellation.class.getName());
    }
    this.serviceName = service.getFullName();
    this.retryable = BackendServiceConfig.retryableFullNames(service);
    this.circuitBreaker = circuitBreaker;
    this.limiter = new RouteLimiter(serviceName,
        service.getMethods().stream().map(com.google.protobuf.Descriptors.MethodDescriptor::getName).toList(),
        admission, meters);
    this.defaultDeadline = defaultDeadline;
    this.minForwardBudgetNanos = minForwardBudget.toNanos();
    eventLoops.forEach(loop -> loops.add((EventLoop) loop));
    this.channels = loops.stream().map(loop -> EventLoops.channelTo(instances, loop, credentials)
        .defaultServiceConfig(BackendServiceConfig.of(service))
        // Retries are ours (below): grpc-java's retry machinery wraps every call, and cost a third of the
        // gateway's CPU per call in the proxy benchmark; ours costs nothing until a call fails.
        .disableRetry()
        .intercept(new MetricCollectingClientInterceptor(meters), ScopeForwarding.INSTANCE)
        .build()).toList();
  }

  public String serviceName() {
    return serviceName;
  }

  public CircuitBreaker circuitBreaker() {
    return circuitBreaker;
  }

  /**
   * READY while any of its channels is (they reach the same instances), else TRANSIENT_FAILURE if one
   * is failing; {@code connect} wakes idle channels.
   */
  public ConnectivityState state(boolean connect) {
    List<ConnectivityState> states = channels.stream().map(channel -> channel.getState(connect)).toList();
    if (states.contains(ConnectivityState.READY)) {
      return ConnectivityState.READY;
    }
    return states.contains(ConnectivityState.TRANSIENT_FAILURE) ? ConnectivityState.TRANSIENT_FAILURE : states.get(0);
  }

  /** Retries connecting now instead of after the channels' growing backoff. */
  public void reconnectNow() {
    channels.forEach(ManagedChannel::resetConnectBackoff);
  }

  /**
   * The channel of the calling I/O thread: the call goes out, and its answer comes back to the caller,
   * on the thread that read the request, with no hand-off between threads (nginx's workers do the
   * same). Half of the calls used to cross threads twice, and paid a wake-up each time. Callers off the
   * I/O threads get the first channel.
   */
  private ManagedChannel channel() {
    for (int i = 0; i < loops.size(); i++) {
      if (loops.get(i).inEventLoop()) {
        return channels.get(i);
      }
    }
    return channels.get(0);
  }

  /**
   * Forwards one unary call, as bytes, to a healthy instance. The caller's deadline and cancellation
   * carry over (the call is made in the incoming call's context); a call without a deadline gets the
   * default, and one with less than the minimum budget left fails at once. Statuses and their
   * trailers ({@code google.rpc} details) come back unchanged. A call that is safe to repeat is tried
   * once more, on the next instance, when it fails with UNAVAILABLE and the minimum budget is left.
   */
  public void forward(MethodDescriptor<byte[], byte[]> method, byte[] request, StreamObserver<byte[]> response) {
    Context context = Context.current();
    Deadline callers = context.getDeadline();
    if (callers != null && callers.timeRemaining(TimeUnit.NANOSECONDS) < minForwardBudgetNanos) {
      response.onError(deadlineTooShort(callers));
      return;
    }
    Optional<Limiter.Listener> slot = limiter.acquire(method.getBareMethodName());
    if (slot.isEmpty()) {
      response.onError(overloaded.computeIfAbsent(method.getBareMethodName(), this::overloaded).exception());
      return;
    }
    if (!circuitBreaker.tryAcquirePermission()) {
      RouteLimiter.release(slot.get(), RouteLimiter.Outcome.IGNORED);
      response.onError(StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
          .setCode(Code.UNAVAILABLE_VALUE)
          .setMessage(serviceName + " is unavailable; failing fast while its circuit is open")
          .addDetails(Any.pack(ErrorInfo.newBuilder()
              .setReason("BACKEND_CIRCUIT_OPEN")
              .setDomain(GrpcErrors.ERROR_DOMAIN)
              .putMetadata("service", serviceName)
              .build()))
          .build()));
      return;
    }
    // The call's budget: the caller's deadline (the call context carries it), or the default one.
    Deadline budget = callers != null ? callers : Deadline.after(defaultDeadline.toNanos(), TimeUnit.NANOSECONDS);
    CallOptions options = callers != null ? CallOptions.DEFAULT : CallOptions.DEFAULT.withDeadline(budget);
    int attempts = retryable.contains(method.getFullMethodName()) ? BackendServiceConfig.MAX_ATTEMPTS : 1;
    attempt(context, method, options, budget, request, response, attempts, System.nanoTime(), slot.get());
  }

  /**
   * A call over the backend's concurrency limit: refused at once, before it costs the backend anything,
   * with the same status and retry hint a service's own admission gives.
   */
  private GrpcErrors.Prepared overloaded(String route) {
    return GrpcErrors.prepare(limiter.refusal(route, serviceName + " is at the gateway's concurrency limit for it",
        Map.of("service", serviceName)));
  }

  /**
   * What a finished call tells the backend's limit. A RESOURCE_EXHAUSTED answer is the backend's own
   * admission refusing at once (or its store throttling): its quick answer says nothing of the backend's
   * latency, so it neither grows nor shrinks the gateway's limit; the backend's limit decides.
   */
  private static RouteLimiter.Outcome outcome(Status.Code code, boolean callerLeft) {
    if (callerLeft || code == Status.Code.RESOURCE_EXHAUSTED) {
      return RouteLimiter.Outcome.IGNORED;
    }
    return RouteLimiter.outcomeOf(code);
  }

  private StatusRuntimeException deadlineTooShort(Deadline callers) {
    long minMs = TimeUnit.NANOSECONDS.toMillis(minForwardBudgetNanos);
    long leftMs = Math.max(0, callers.timeRemaining(TimeUnit.MILLISECONDS));
    return StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
        .setCode(Code.DEADLINE_EXCEEDED_VALUE)
        .setMessage("the call's deadline leaves " + leftMs + " ms; the gateway forwards a call only with at least "
            + minMs + " ms left")
        .addDetails(Any.pack(ErrorInfo.newBuilder()
            .setReason("DEADLINE_TOO_SHORT")
            .setDomain(GrpcErrors.ERROR_DOMAIN)
            .putMetadata("remaining_ms", Long.toString(leftMs))
            .putMetadata("min_forward_budget_ms", Long.toString(minMs))
            .build()))
        .build());
  }

  private void attempt(Context context, MethodDescriptor<byte[], byte[]> method, CallOptions options, Deadline budget,
      byte[] request, StreamObserver<byte[]> response, int attemptsLeft, long started, Limiter.Listener slot) {
    ClientCalls.asyncUnaryCall(channel().newCall(method, options), request, new StreamObserver<>() {
      @Override
      public void onNext(byte[] value) {
        response.onNext(value);
      }

      @Override
      public void onError(Throwable received) {
        Throwable t = GrpcErrors.pastDeadline(asTransportFailure(received), budget);
        Status.Code code = Status.fromThrowable(t).getCode();
        boolean transport = !GrpcErrors.answeredByService(t);
        // Only a failure of the transport is retried here: a service that answered UNAVAILABLE itself (its
        // database, or its own dependency) already retried in its own layer.
        if (code == Status.Code.UNAVAILABLE && transport && attemptsLeft > 1 && !context.isCancelled()
            && budget.timeRemaining(TimeUnit.NANOSECONDS) >= minForwardBudgetNanos) {
          // Round robin hands the retry to the next healthy instance; it runs in the caller's context,
          // so it keeps the caller's deadline and cancellation.
          context.run(() -> attempt(context, method, options, budget, request, response, attemptsLeft - 1, started,
              slot));
          return;
        }
        long elapsed = System.nanoTime() - started;
        RouteLimiter.release(slot, outcome(code, context.isCancelled() && !budget.isExpired()));
        if (context.isCancelled() && !budget.isExpired()) {
          // The caller went away before its deadline: nothing learnt about the backend.
          circuitBreaker.onError(elapsed, TimeUnit.NANOSECONDS, CALLER_CANCELLATION);
        } else if (code == Status.Code.UNAVAILABLE && transport || code == Status.Code.DEADLINE_EXCEEDED) {
          // Signs of a sick backend: unreachable, or silent past the deadline. What it answers itself, its
          // dependencies' failures and its data's contention included, does not count against it.
          circuitBreaker.onError(elapsed, TimeUnit.NANOSECONDS, t);
        } else {
          circuitBreaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
        }
        response.onError(t);
      }

      @Override
      public void onCompleted() {
        RouteLimiter.release(slot, RouteLimiter.Outcome.SUCCESS);
        circuitBreaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        response.onCompleted();
      }
    });
  }

  /**
   * A connection that closes under a call: grpc-java reports it as UNAVAILABLE in plaintext, but over TLS,
   * when the close meets the call's write, as UNKNOWN "channel closed" (grpc-java issue 10120). Both are the
   * transport failing, not the backend answering: this makes the second UNAVAILABLE too, so it is retried
   * and counted as plaintext's is. Only our client's own failure carries the closed channel as its cause; an
   * UNKNOWN that a backend sent has none, and is passed on as it came.
   */
  static Throwable asTransportFailure(Throwable failure) {
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

  @Override
  public void close() {
    EventLoops.close(channels);
  }
}
