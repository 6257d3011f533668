package dev.warehouse.gateway.backend;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoop;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingClientInterceptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One backend service (say, the inventory-service) behind the gateway: channels balancing over its
 * instances, one per gateway I/O thread, and a circuit breaker that fails calls fast while the whole
 * service is down.
 */
public final class Backend implements AutoCloseable {

  private final String serviceName;
  private final List<EventLoop> loops = new ArrayList<>();
  private final List<ManagedChannel> channels;
  private final CircuitBreaker circuitBreaker;
  private final Duration defaultDeadline;
  private final Set<String> retryable;

  public Backend(com.google.protobuf.Descriptors.ServiceDescriptor service, List<String> addresses,
      CircuitBreaker circuitBreaker, Duration defaultDeadline, MeterRegistry meters, EventLoopGroup eventLoops) {
    StaticAddressResolverProvider.register();
    this.serviceName = service.getFullName();
    this.retryable = BackendServiceConfig.retryableFullNames(service);
    this.circuitBreaker = circuitBreaker;
    this.defaultDeadline = defaultDeadline;
    eventLoops.forEach(loop -> loops.add((EventLoop) loop));
    this.channels = loops.stream().map(loop -> NettyChannelBuilder
        .forTarget(StaticAddressResolverProvider.target(addresses))
        .usePlaintext()
        .eventLoopGroup(loop)
        .channelType(EventLoops.clientChannel())
        .directExecutor()
        .defaultServiceConfig(BackendServiceConfig.of(service))
        // Retries are ours (below): grpc-java's retry machinery wraps every call, and cost a third of the
        // gateway's CPU per call in the proxy benchmark; ours costs nothing until a call fails.
        .disableRetry()
        .intercept(new MetricCollectingClientInterceptor(meters))
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
   * default. Statuses and their trailers ({@code google.rpc} details) come back unchanged. A call that
   * is safe to repeat is tried once more, on the next instance, when it fails with UNAVAILABLE.
   */
  public void forward(MethodDescriptor<byte[], byte[]> method, byte[] request, StreamObserver<byte[]> response) {
    if (!circuitBreaker.tryAcquirePermission()) {
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
    Context context = Context.current();
    CallOptions options = context.getDeadline() == null
        ? CallOptions.DEFAULT.withDeadlineAfter(defaultDeadline.toMillis(), TimeUnit.MILLISECONDS)
        : CallOptions.DEFAULT;
    int attempts = retryable.contains(method.getFullMethodName()) ? BackendServiceConfig.MAX_ATTEMPTS : 1;
    attempt(context, method, options, request, response, attempts, System.nanoTime());
  }

  private void attempt(Context context, MethodDescriptor<byte[], byte[]> method, CallOptions options, byte[] request,
      StreamObserver<byte[]> response, int attemptsLeft, long started) {
    ClientCalls.asyncUnaryCall(channel().newCall(method, options), request, new StreamObserver<>() {
      @Override
      public void onNext(byte[] value) {
        response.onNext(value);
      }

      @Override
      public void onError(Throwable t) {
        Status.Code code = Status.fromThrowable(t).getCode();
        if (code == Status.Code.UNAVAILABLE && attemptsLeft > 1 && !context.isCancelled()) {
          // Round robin hands the retry to the next healthy instance; it runs in the caller's context,
          // so it keeps the caller's deadline and cancellation.
          context.run(() -> attempt(context, method, options, request, response, attemptsLeft - 1, started));
          return;
        }
        // Only signs of a sick backend count against it; its answers about data (NOT_FOUND, ...) do not.
        if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
          circuitBreaker.onError(System.nanoTime() - started, TimeUnit.NANOSECONDS, t);
        } else {
          circuitBreaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        }
        response.onError(t);
      }

      @Override
      public void onCompleted() {
        circuitBreaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        response.onCompleted();
      }
    });
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdown);
    try {
      for (ManagedChannel channel : channels) {
        if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
          channel.shutdownNow();
        }
      }
    } catch (InterruptedException e) {
      channels.forEach(ManagedChannel::shutdownNow);
      Thread.currentThread().interrupt();
    }
  }
}
