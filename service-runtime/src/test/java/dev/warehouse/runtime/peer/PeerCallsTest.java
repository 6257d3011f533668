package dev.warehouse.runtime.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import dev.warehouse.testing.ManualScheduler;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The one client of service-to-service calls, against a real in-process gRPC peer whose answers each test
 * scripts: what is retried (the transport's failures of calls safe to repeat, within the deadline), what the
 * breaker hears (only the peer's own failures), and the codes a caller sees.
 */
class PeerCallsTest {

  private static final String CHECK = HealthGrpc.getCheckMethod().getFullMethodName();
  private static final HealthCheckRequest REQUEST = HealthCheckRequest.getDefaultInstance();

  /** What the peer does with each call it receives, in order; the last one repeats. */
  private final ConcurrentLinkedQueue<Consumer<StreamObserver<HealthCheckResponse>>> script = new ConcurrentLinkedQueue<>();
  private final AtomicInteger received = new AtomicInteger();
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final AtomicInteger reconnects = new AtomicInteger();
  private Server server;
  private ManagedChannel channel;
  private CircuitBreaker breaker;

  @BeforeEach
  void start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).directExecutor().addService(new HealthGrpc.HealthImplBase() {
      @Override
      public void check(HealthCheckRequest request, StreamObserver<HealthCheckResponse> response) {
        received.incrementAndGet();
        Consumer<StreamObserver<HealthCheckResponse>> next = script.size() > 1 ? script.poll() : script.peek();
        next.accept(response);
      }
    }).build().start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    breaker = CircuitBreaker.of("peer", PeerCalls.breakerConfig(4, 2, Duration.ofMinutes(1)));
  }

  @AfterEach
  void stop() {
    channel.shutdownNow();
    server.shutdownNow();
    scheduler.shutdownNow();
  }

  private PeerCalls calls(Set<String> retryable) {
    return calls(retryable, Duration.ofMillis(50));
  }

  private PeerCalls calls(Set<String> retryable, Duration minBudget) {
    return new PeerCalls("peer", breaker, retryable, Duration.ofSeconds(5), minBudget, false,
        reconnects::incrementAndGet, scheduler, meters);
  }

  private static Consumer<StreamObserver<HealthCheckResponse>> answer() {
    return r -> {
      r.onNext(HealthCheckResponse.newBuilder().setStatus(HealthCheckResponse.ServingStatus.SERVING).build());
      r.onCompleted();
    };
  }

  private static Consumer<StreamObserver<HealthCheckResponse>> fail(Status status) {
    return r -> r.onError(status.asRuntimeException());
  }

  /** A failure the peer answered itself: it carries our ErrorInfo. */
  private static Consumer<StreamObserver<HealthCheckResponse>> answerFailure(int code, String reason) {
    return r -> r.onError(StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder().setCode(code)
        .setMessage(reason).addDetails(Any.pack(ErrorInfo.newBuilder().setReason(reason).setDomain("warehouse.dev")
            .build())).build()));
  }

  private CompletableFuture<HealthCheckResponse> call(PeerCalls calls) {
    return calls.call(() -> channel, HealthGrpc.getCheckMethod(), REQUEST);
  }

  private static StatusRuntimeException failureOf(CompletableFuture<?> call) {
    Throwable thrown = catchThrowable(() -> call.get(10, TimeUnit.SECONDS));
    assertThat(thrown).isInstanceOf(ExecutionException.class);
    assertThat(thrown.getCause()).isInstanceOf(StatusRuntimeException.class);
    return (StatusRuntimeException) thrown.getCause();
  }

  private static String reason(StatusRuntimeException failure) {
    com.google.rpc.Status status = StatusProto.fromThrowable(failure);
    return status == null ? "" : status.getDetailsList().stream().filter(d -> d.is(ErrorInfo.class)).map(d -> {
      try {
        return d.unpack(ErrorInfo.class).getReason();
      } catch (com.google.protobuf.InvalidProtocolBufferException e) {
        throw new IllegalStateException(e);
      }
    }).findFirst().orElse("");
  }

  @Test
  void aTransportFailure_ofACallSafeToRepeat_isTriedAgain_andTheAnswerReturned() throws Exception {
    script.add(fail(Status.UNAVAILABLE));
    script.add(fail(Status.UNAVAILABLE));
    script.add(answer());

    HealthCheckResponse answer = call(calls(Set.of(CHECK))).get(10, TimeUnit.SECONDS);

    assertThat(answer.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    assertThat(received).hasValue(3);
    assertThat(reconnects).as("each transport failure asks the channel to reconnect now").hasValue(2);
    assertThat(meters.get("peer.call.retries").tag("peer", "peer").tag("method", "Check").counter().count()).isEqualTo(2);
    assertThat(breaker.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
  }

  @Test
  void aTransportFailure_isTriedAtMostMaxAttemptsTimes_thenCountedAgainstThePeer() {
    script.add(fail(Status.UNAVAILABLE));

    StatusRuntimeException failure = failureOf(call(calls(Set.of(CHECK))));

    assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(received).hasValue(PeerCalls.MAX_ATTEMPTS);
    assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
  }

  @Test
  void aCallNotDeclaredSafeToRepeat_isTriedOnce() {
    script.add(fail(Status.UNAVAILABLE));

    assertThat(failureOf(call(calls(Set.of()))).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(received).hasValue(1);
  }

  @Test
  void whatThePeerAnsweredItself_isNeitherTriedAgainNorCountedAgainstIt() {
    // Its contention (ABORTED after its own rounds), and its database's UNAVAILABLE after its data layer's retries.
    script.add(answerFailure(com.google.rpc.Code.ABORTED_VALUE, "STOCK_CONTENDED"));
    script.add(answerFailure(com.google.rpc.Code.UNAVAILABLE_VALUE, "DATABASE_UNAVAILABLE"));
    PeerCalls calls = calls(Set.of(CHECK));

    StatusRuntimeException contended = failureOf(call(calls));
    StatusRuntimeException database = failureOf(call(calls));

    assertThat(contended.getStatus().getCode()).isEqualTo(Status.Code.ABORTED);
    assertThat(reason(contended)).isEqualTo("STOCK_CONTENDED");
    assertThat(database.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(received).as("one attempt each").hasValue(2);
    assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
    assertThat(breaker.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(2);
  }

  @Test
  void contentionOnOneProduct_neverOpensTheCircuit() {
    script.add(answerFailure(com.google.rpc.Code.ABORTED_VALUE, "STOCK_CONTENDED"));
    PeerCalls calls = calls(Set.of(CHECK));

    for (int i = 0; i < 10; i++) {
      failureOf(call(calls));
    }

    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void aDeadlineTooShort_isRefusedBeforeAnythingIsSent_andTheBreakerIsNotAsked() throws Exception {
    script.add(answer());
    Context.CancellableContext caller = Context.current().withDeadline(
        Deadline.after(10, TimeUnit.MILLISECONDS), scheduler);

    CompletableFuture<HealthCheckResponse> call = caller.call(() -> call(calls(Set.of(CHECK))));
    StatusRuntimeException failure = failureOf(call);
    caller.cancel(null);

    assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(reason(failure)).isEqualTo("DEADLINE_TOO_SHORT");
    assertThat(PeerCalls.notSent(failure)).isTrue();
    assertThat(received).hasValue(0);
    assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).isZero();
  }

  @Test
  void anOpenCircuit_failsFast_withoutSendingTheCall() {
    script.add(answer());
    breaker.transitionToOpenState();

    StatusRuntimeException failure = failureOf(call(calls(Set.of(CHECK))));

    assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(reason(failure)).isEqualTo("BACKEND_CIRCUIT_OPEN");
    assertThat(PeerCalls.notSent(failure)).isTrue();
    assertThat(received).hasValue(0);
  }

  @Test
  void aPeerSilentPastTheDeadline_isDeadlineExceeded_neverCancelled_andCountsAgainstIt() throws Exception {
    script.add(answer());
    script.add(r -> { }); // then never answers
    PeerCalls calls = calls(Set.of(CHECK));
    // An answered call first: a first call loads the client's and the channel's classes, which on a loaded
    // machine can outlast the deadline below before the call reaches the peer.
    call(calls).get(10, TimeUnit.SECONDS);
    Context.CancellableContext caller = Context.current().withDeadline(
        Deadline.after(1, TimeUnit.SECONDS), scheduler);

    CompletableFuture<HealthCheckResponse> call = caller.call(() -> call(calls));
    StatusRuntimeException failure = failureOf(call);

    assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(PeerCalls.notSent(failure)).as("sent, not refused for a short deadline").isFalse();
    assertThat(received).as("the peer got it").hasValue(2);
    assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
  }

  @Test
  void aCallerLeavingBeforeItsDeadline_isNeitherFailureNorSuccess() throws Exception {
    script.add(r -> { });
    Context.CancellableContext caller = Context.current().withDeadline(Deadline.after(1, TimeUnit.MINUTES), scheduler);

    CompletableFuture<HealthCheckResponse> call = caller.call(() -> call(calls(Set.of(CHECK))));
    caller.cancel(null);
    StatusRuntimeException failure = failureOf(call);

    assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.CANCELLED);
    assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).isZero();
    assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void aCallKeepsBackPartOfItsCallersDeadline_toAnswerTheCallerItself() throws Exception {
    // The peer learns its deadline from the call: what it sees is what this client gave it.
    AtomicLong seenMs = new AtomicLong();
    script.add(r -> {
      seenMs.set(Context.current().getDeadline().timeRemaining(TimeUnit.MILLISECONDS));
      answer().accept(r);
    });
    Context.CancellableContext caller = Context.current().withDeadline(Deadline.after(10, TimeUnit.SECONDS), scheduler);

    caller.call(() -> call(calls(Set.of(CHECK)))).get(10, TimeUnit.SECONDS);
    caller.cancel(null);

    assertThat(seenMs.get()).isPositive().isLessThanOrEqualTo(10_000 - PeerCalls.ANSWER_RESERVE.toMillis());
  }

  @Test
  void aReachablePeer_getsItsTrialCallsASecondAfterItsCircuitOpened_anUnreachableOneWaitsOutTheOpenTime() {
    PeerCalls calls = calls(Set.of(CHECK));
    breaker.transitionToOpenState();
    long opened = System.nanoTime();

    calls.observe(ConnectivityState.TRANSIENT_FAILURE, opened + TimeUnit.SECONDS.toNanos(30));
    assertThat(reconnects).as("a failing connection is retried now").hasValue(1);
    assertThat(breaker.getState()).as("unreachable: the open time").isEqualTo(CircuitBreaker.State.OPEN);

    calls.observe(ConnectivityState.READY, opened);
    assertThat(breaker.getState()).as("reachable, but only just opened").isEqualTo(CircuitBreaker.State.OPEN);

    calls.observe(ConnectivityState.READY, opened + PeerCalls.REACHABLE_TRIAL_AFTER.toNanos());
    assertThat(breaker.getState()).as("reachable: its trial calls may go").isEqualTo(CircuitBreaker.State.HALF_OPEN);
  }

  /**
   * After an attempt, another is made only if the minimum budget still fits behind the longest backoff it may wait
   * (the first: 20 ms and half again), within what the call keeps back to answer its caller (100 ms of a deadline
   * this long). The caller's deadline runs on time the test holds still, so what is left after the attempt is
   * exactly what the test set. The budget is long (5 s) because gRPC times the attempt itself
   * on real time, from what is left: a short one would fail a slow attempt with DEADLINE_EXCEEDED.
   */
  @ParameterizedTest(name = "{0} ms over the minimum budget: attempts {1}")
  @CsvSource({"129, 1", "130, 2"})
  void aRetryStartsOnlyWithRoomForTheLongestBackoffAndTheMinimumBudget(long overMs, int attempts) throws Exception {
    script.add(fail(Status.UNAVAILABLE));
    script.add(answer());
    Duration minBudget = Duration.ofSeconds(5);
    PeerCalls calls = calls(Set.of(CHECK), minBudget);
    ManualScheduler time = new ManualScheduler();
    Context.CancellableContext caller = Context.current().withDeadline(
        Deadline.after(minBudget.plusMillis(overMs).toNanos(), TimeUnit.NANOSECONDS, time.ticker()), time);

    CompletableFuture<HealthCheckResponse> call = caller.call(() -> call(calls));
    if (attempts == 1) {
      assertThat(failureOf(call).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    } else {
      assertThat(call.get(10, TimeUnit.SECONDS).getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    }
    caller.cancel(null);
    assertThat(received).hasValue(attempts);
  }

  @Test
  void aClosedChannel_underACall_isATransportFailure() {
    // What grpc-java's Netty transport makes of a connection closed under a call over TLS (grpc-java issue 10120).
    StatusRuntimeException closed = Status.UNKNOWN.withDescription("channel closed")
        .withCause(new ClosedChannelException()).asRuntimeException();
    StatusRuntimeException fromPeer = Status.UNKNOWN.withDescription("boom").asRuntimeException();

    assertThat(Status.fromThrowable(PeerCalls.asTransportFailure(closed)).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(PeerCalls.asTransportFailure(fromPeer)).isSameAs(fromPeer);
  }
}
