package dev.warehouse.gateway.backend;

import com.netflix.concurrency.limits.Limiter;
import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.runtime.admission.RouteLimiter;
import dev.warehouse.runtime.discovery.BackendInstances;
import dev.warehouse.runtime.discovery.BackendServiceConfig;
import dev.warehouse.runtime.discovery.EventLoops;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.peer.PeerCalls;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.channel.EventLoop;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingClientInterceptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One backend service (say, the inventory-service) behind the gateway: channels balancing over its
 * current instances ({@link BackendInstances}), one per gateway I/O thread, a concurrency limit that
 * holds back what the backend cannot serve at low latency ({@link RouteLimiter}: adaptive, one per
 * method, so that one method's flood leaves the others theirs; a burst waits briefly, a flood is refused),
 * and the calls themselves made by {@link PeerCalls}, the client every service-to-service call goes through: the caller's deadline and
 * cancellation, the one retry of a transport failure, and the circuit breaker that fails calls fast while
 * the whole service is down. The limit is for a busy backend, the breaker for a failing one: a backend's
 * own refusal (RESOURCE_EXHAUSTED) is an answer, never a failure, to the breaker.
 */
public final class Backend implements AutoCloseable {

  private final String serviceName;
  private final List<EventLoop> loops = new ArrayList<>();
  private final List<ManagedChannel> channels;
  private final PeerCalls calls;
  private final RouteLimiter limiter;
  /** A call's time when its caller set no deadline: the most it may wait for a slot is half of it. */
  private final long defaultDeadlineNanos;
  /** The start of a refusal's message, and its metadata: the same for every call, so made once. */
  private final String whoseLimit;
  private final Map<String, String> refusalMetadata;
  /** Each method's refusal at its limit, built at its first: answered thousands of times a second under a flood. */
  private final ConcurrentHashMap<String, GrpcErrors.Prepared> overloaded = new ConcurrentHashMap<>();

  /**
   * @param instances         the service's instances, which the channels follow as they change
   * @param admission         the settings of the backend's concurrency limits, one per method
   * @param minForwardBudget  the least time left before a caller's deadline with which a call is forwarded
   * @param credentials       how the channels to the instances are secured
   * @param tracing           each forwarded call's span, and its trace context for the backend
   */
  public Backend(com.google.protobuf.Descriptors.ServiceDescriptor service, BackendInstances instances,
      CircuitBreaker circuitBreaker, AdmissionConfig admission, Duration defaultDeadline, Duration minForwardBudget,
      MeterRegistry meters,
      EventLoopGroup eventLoops, ChannelCredentials credentials, ClientInterceptor tracing) {
    this.serviceName = service.getFullName();
    this.defaultDeadlineNanos = defaultDeadline.toNanos();
    this.whoseLimit = serviceName + " is at the gateway's concurrency limit for it";
    this.refusalMetadata = Map.of("service", serviceName);
    this.limiter = new RouteLimiter(serviceName,
        service.getMethods().stream().map(com.google.protobuf.Descriptors.MethodDescriptor::getName).toList(),
        admission, meters, eventLoops.next());
    eventLoops.forEach(loop -> loops.add((EventLoop) loop));
    this.channels = loops.stream().map(loop -> EventLoops.channelTo(instances, loop, credentials)
        .defaultServiceConfig(BackendServiceConfig.of(service))
        // Retries are PeerCalls': grpc-java's retry machinery wraps every call, and cost a third of the
        // gateway's CPU per call in the proxy benchmark; PeerCalls' costs nothing until a call fails.
        .disableRetry()
        .intercept(new MetricCollectingClientInterceptor(meters), ScopeForwarding.INSTANCE, tracing)
        .build()).toList();
    // Fail fast (no wait for ready): with every instance down, the caller hears UNAVAILABLE now, and the
    // breaker opens on it. Backoffs wait on the I/O threads' own timers.
    this.calls = new PeerCalls(circuitBreaker.getName(), circuitBreaker, BackendServiceConfig.retryableFullNames(service),
        defaultDeadline, minForwardBudget, false, this::reconnectNow, eventLoops, meters);
  }

  public String serviceName() {
    return serviceName;
  }

  public CircuitBreaker circuitBreaker() {
    return calls.circuitBreaker();
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

  /** A connectivity check's finding, for the calls' reconnects and circuit ({@link PeerCalls#observe}). */
  public void observe(ConnectivityState state) {
    calls.observe(state);
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
  private Channel channel() {
    for (int i = 0; i < loops.size(); i++) {
      if (loops.get(i).inEventLoop()) {
        return channels.get(i);
      }
    }
    return channels.get(0);
  }

  /**
   * Forwards one unary call, as bytes, through {@link PeerCalls}: the caller's deadline and cancellation
   * carry over, a call with less than the minimum budget left fails at once ({@code DEADLINE_TOO_SHORT}),
   * and statuses and their trailers ({@code google.rpc} details) come back unchanged. Over the method's
   * concurrency limit, the call waits briefly for a slot, parked on no thread, and is refused before it costs
   * the backend anything when none comes.
   */
  public void forward(MethodDescriptor<byte[], byte[]> method, byte[] request, StreamObserver<byte[]> response) {
    String route = method.getBareMethodName();
    Context context = Context.current();
    Deadline deadline = context.getDeadline();
    long timeLeft = deadline == null ? defaultDeadlineNanos : deadline.timeRemaining(TimeUnit.NANOSECONDS);
    CompletableFuture<Limiter.Listener> admitted = limiter.admit(route, timeLeft, whoseLimit, refusalMetadata);
    if (admitted.isDone() && !admitted.isCompletedExceptionally()) {
      send(context, method, request, response, admitted.join());
      return;
    }
    admitted.whenComplete((slot, refused) -> {
      if (refused != null) {
        response.onError(overloaded.computeIfAbsent(route, this::overloaded).exception());
      } else if (context.isCancelled()) {
        RouteLimiter.release(slot, RouteLimiter.Outcome.IGNORED); // the caller left while it waited
        response.onError(Status.CANCELLED.withDescription("the call was cancelled").asRuntimeException());
      } else {
        context.run(() -> send(context, method, request, response, slot));
      }
    });
  }

  private void send(Context context, MethodDescriptor<byte[], byte[]> method, byte[] request,
      StreamObserver<byte[]> response, Limiter.Listener slot) {
    calls.call(this::channel, method, request).whenComplete((answer, failure) -> {
      if (failure == null) {
        RouteLimiter.release(slot, RouteLimiter.Outcome.SUCCESS);
        response.onNext(answer);
        response.onCompleted();
        return;
      }
      boolean callerLeft = context.isCancelled() && !deadlinePassed(context);
      RouteLimiter.release(slot, PeerCalls.notSent(failure) ? RouteLimiter.Outcome.IGNORED
          : outcome(Status.fromThrowable(failure).getCode(), callerLeft));
      response.onError(failure);
    });
  }

  private static boolean deadlinePassed(Context context) {
    Deadline deadline = context.getDeadline();
    return deadline != null && deadline.isExpired();
  }

  /**
   * A call over the backend's concurrency limit that waited for a slot in vain: refused before it costs the
   * backend anything, with the same status and retry hint a service's own admission gives.
   */
  private GrpcErrors.Prepared overloaded(String route) {
    return GrpcErrors.prepare(limiter.refusal(route, whoseLimit, refusalMetadata));
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

  @Override
  public void close() {
    EventLoops.close(channels);
  }
}
