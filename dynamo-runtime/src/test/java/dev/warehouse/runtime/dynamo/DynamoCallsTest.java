package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.testing.ManualScheduler;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.IdempotentParameterMismatchException;
import software.amazon.awssdk.services.dynamodb.model.InternalServerErrorException;
import software.amazon.awssdk.services.dynamodb.model.ItemCollectionSizeLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.LimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.TransactionConflictException;
import software.amazon.awssdk.services.dynamodb.model.TransactionInProgressException;

/**
 * The one retry layer, driven by the futures it is handed (failed with the SDK's own exception
 * objects) on a scheduler whose time the test moves: which failures are tried again and which end the
 * call at once, how long it waits between attempts, that no attempt outlives the operation's time or
 * the caller's deadline, what the caller is finally told, and what it counts. No sleeps: every
 * backoff and deadline is a task on {@link ManualScheduler}.
 */
class DynamoCallsTest {

  private static final Duration OPERATION = Duration.ofSeconds(1);

  private final ManualScheduler time = new ManualScheduler();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final List<Attempt> attempts = new ArrayList<>();

  /** One attempt as the layer started it: when, with what timeout, and the future it was handed. */
  record Attempt(Duration startedAt, Duration timeout, CompletableFuture<String> future) {}

  // Which failures are retried

  static Stream<Arguments> transientFailures() {
    return Stream.of(
        Arguments.of(service(ProvisionedThroughputExceededException.builder(), 400), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED"),
        Arguments.of(service(RequestLimitExceededException.builder(), 400), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED"),
        Arguments.of(generic("ThrottlingException", 400), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED"),
        Arguments.of(cancelled("None", "ThrottlingError"), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED"),
        Arguments.of(cancelled("None", "TransactionConflict"), Status.Code.ABORTED, "TRANSACTION_CONFLICT"),
        Arguments.of(service(TransactionConflictException.builder(), 400), Status.Code.ABORTED, "TRANSACTION_CONFLICT"),
        Arguments.of(service(TransactionInProgressException.builder(), 400), Status.Code.ABORTED, "TRANSACTION_IN_PROGRESS"),
        Arguments.of(service(InternalServerErrorException.builder(), 500), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE"),
        Arguments.of(generic("ServiceUnavailable", 503), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE"),
        Arguments.of(SdkClientException.create("connection reset"), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE"),
        Arguments.of(ApiCallAttemptTimeoutException.create(250), Status.Code.UNAVAILABLE, "DATABASE_TIMEOUT"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transientFailures")
  void transientFailure_isTriedAgain_andTheSecondAttemptsAnswerIsTheCallers(Throwable failure, Status.Code code,
      String reason) {
    CompletableFuture<String> result = run(calls(OPERATION), failure, "answer");
    time.runAll();

    assertThat(result).isCompletedWithValue("answer");
    assertThat(attempts).hasSize(2);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transientFailures")
  void transientFailure_everyAttempt_endsAfterMaxAttempts_withItsOwnStatus(Throwable failure, Status.Code code,
      String reason) {
    CompletableFuture<String> result = run(calls(OPERATION), failure, failure, failure, failure, "never asked for");
    time.runAll();

    assertThat(attempts).hasSize(DynamoCalls.MAX_ATTEMPTS);
    assertFailed(result, code, reason);
  }

  static Stream<Arguments> finalFailures() {
    return Stream.of(
        Arguments.of(service(ConditionalCheckFailedException.builder(), 400), Status.Code.FAILED_PRECONDITION, "CONDITION_FAILED"),
        // A failed condition is the answer, even when another item of the transaction also conflicted.
        Arguments.of(cancelled("ConditionalCheckFailed", "TransactionConflict"), Status.Code.FAILED_PRECONDITION, "CONDITION_FAILED"),
        Arguments.of(cancelled("ValidationError"), Status.Code.FAILED_PRECONDITION, "DATABASE_REJECTED_REQUEST"),
        Arguments.of(generic("ValidationException", 400), Status.Code.FAILED_PRECONDITION, "DATABASE_REJECTED_REQUEST"),
        Arguments.of(service(IdempotentParameterMismatchException.builder(), 400), Status.Code.ABORTED, "IDEMPOTENCY_TOKEN_MISMATCH"),
        // An account limit on control-plane calls: waiting a few milliseconds does not lift it.
        Arguments.of(service(LimitExceededException.builder(), 400), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED"),
        Arguments.of(service(ItemCollectionSizeLimitExceededException.builder(), 400), Status.Code.RESOURCE_EXHAUSTED, "ITEM_COLLECTION_FULL"),
        Arguments.of(service(ResourceNotFoundException.builder(), 400), Status.Code.FAILED_PRECONDITION, "DATABASE_TABLE_NOT_FOUND"),
        Arguments.of(generic("AccessDeniedException", 400), Status.Code.UNAVAILABLE, "DATABASE_ACCESS_DENIED"),
        // The SDK reports an aborted request as a client failure caused by the cancellation: not the network's.
        Arguments.of(SdkClientException.create("aborted", new CancellationException()), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("finalFailures")
  void failureThatSaysSomethingAboutTheRequest_endsTheCallAtOnce(Throwable failure, Status.Code code, String reason) {
    CompletableFuture<String> result = run(calls(OPERATION), failure, "never asked for");
    time.runAll();

    assertThat(attempts).hasSize(1);
    assertThat(time.delays()).as("no backoff scheduled").isEmpty();
    assertFailed(result, code, reason);
  }

  @Test
  void failedCondition_carriesTheItemAsItWas() {
    Map<String, AttributeValue> old = Map.of("PK", AttributeValue.fromS("P#1"), "qty", AttributeValue.fromN("3"));
    Throwable failure = ConditionalCheckFailedException.builder().message("fault").statusCode(400).item(old)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode("ConditionalCheckFailedException").build()).build();

    CompletableFuture<String> result = run(calls(OPERATION), failure);

    ConditionFailedException condition = (ConditionFailedException) failure(result);
    assertThat(condition.failed(0)).isTrue();
    assertThat(condition.item(0)).isEqualTo(old);
  }

  // How long it waits, and for how long it tries

  @Test
  void backoffs_doubleFrom25ms_withHalfOfEachAsJitter() {
    List<List<Duration>> waits = new ArrayList<>();
    DynamoCalls calls = calls(Duration.ofSeconds(10));
    Throwable throttled = service(ProvisionedThroughputExceededException.builder(), 400);
    for (int call = 0; call < 300; call++) {
      int before = time.delays().size();
      run(calls, throttled, throttled, throttled, "answer");
      time.runAll();
      waits.add(List.copyOf(time.delays().subList(before, time.delays().size())));
    }

    for (int retry = 0; retry < DynamoCalls.MAX_ATTEMPTS - 1; retry++) {
      long base = DynamoCalls.INITIAL_BACKOFF.toMillis() << retry;
      int index = retry;
      List<Long> millis = waits.stream().map(w -> w.get(index).toMillis()).toList();
      // resilience4j draws from [b/2, 3b/2 + 1) and truncates to whole milliseconds.
      assertThat(millis).as("backoff before attempt " + (retry + 2))
          .allSatisfy(ms -> assertThat(ms).isBetween(base / 2, base * 3 / 2 + 1));
      // Jittered, so that callers cancelled together do not come back together.
      assertThat(millis.stream().mapToLong(Long::longValue).min().orElseThrow()).isLessThan(base);
      assertThat(millis.stream().mapToLong(Long::longValue).max().orElseThrow()).isGreaterThan(base);
    }
  }

  @Test
  void eachAttempt_getsAQuarterOfTheOperation() {
    run(calls(OPERATION), service(TransactionConflictException.builder(), 400), "answer");
    time.runAll();

    assertThat(attempts).extracting(Attempt::timeout).containsOnly(OPERATION.dividedBy(DynamoCalls.MAX_ATTEMPTS));
  }

  @Test
  void transientFailure_isNotTriedAgain_whenTheLongestBackoffLeavesNoTimeForAnAttempt() {
    // After the first failure the backoff may be up to 37.5 ms, and an attempt needs 5 ms: 42.5 ms in all.
    CompletableFuture<String> result = run(calls(Duration.ofMillis(42)), throttled(), "never asked for");
    time.runAll();

    assertThat(attempts).hasSize(1);
    // It keeps its own meaning: the database throttled, it did not time out.
    assertFailed(result, Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED");
  }

  static Stream<Throwable> throttles() {
    return Stream.of(throttled(), generic("ThrottlingException", 400), cancelled("None", "ThrottlingError"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("throttles")
  void aCallStillThrottledAfterItsAttempts_tellsTheCallerWhenToTryAgain(Throwable throttle) {
    CompletableFuture<String> result = run(calls(Duration.ofMillis(42)), throttle, "never asked for");
    time.runAll();

    assertFailed(result, Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED");
    com.google.rpc.Status status = io.grpc.protobuf.StatusProto.fromThrowable(GrpcErrors.toStatusException(failure(result)));
    assertThat(status.getDetailsList()).anySatisfy(detail -> {
      assertThat(detail.is(com.google.rpc.RetryInfo.class)).isTrue();
      assertThat(detail.unpack(com.google.rpc.RetryInfo.class).getRetryDelay().getNanos())
          .isEqualTo((int) DynamoErrors.THROTTLED_RETRY_AFTER.toNanos());
    });
  }

  @Test
  void aThrottledTransactionAttempt_isCountedAsThrottled_notAsACancelledTransaction() {
    assertThat(DynamoMetrics.outcome(cancelled("None", "ThrottlingError"))).isEqualTo("throttled");
    assertThat(DynamoMetrics.outcome(cancelled("ConditionalCheckFailed", "None"))).isEqualTo("transaction_canceled");
    assertThat(DynamoMetrics.outcome(throttled())).isEqualTo("throttled");
  }

  @Test
  void transientFailure_isTriedAgain_whenAnAttemptStillFitsAfterTheLongestBackoff() {
    CompletableFuture<String> result = run(calls(Duration.ofMillis(43)), throttled(), throttled(), "never asked for");
    time.runAll();

    // The second one fails too, and then a 75 ms backoff cannot fit: the call ends, throttled.
    assertThat(attempts).hasSize(2);
    assertThat(attempts.get(1).timeout()).isLessThanOrEqualTo(Duration.ofMillis(43).minus(attempts.get(1).startedAt()));
    assertFailed(result, Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED");
  }

  @Test
  void attemptsThatTimeOut_neverRunPastTheOperationsTime_andEndAsATimeout() {
    Duration operation = Duration.ofMillis(100);
    for (int call = 0; call < 50; call++) {
      attempts.clear();
      Duration started = now();
      // Every attempt hangs until its own timeout, as an unanswered request does.
      CompletableFuture<String> result = calls(operation).run(timeout -> {
        CompletableFuture<String> future = record(timeout, new CompletableFuture<>());
        time.schedule(() -> {
          future.completeExceptionally(ApiCallAttemptTimeoutException.create(timeout.toMillis()));
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        return future;
      });
      time.runAll();

      assertThat(attempts).hasSizeBetween(2, DynamoCalls.MAX_ATTEMPTS);
      assertThat(attempts).allSatisfy(a -> assertThat(a.startedAt().plus(a.timeout())).isLessThanOrEqualTo(started.plus(operation)));
      assertThat(now()).isLessThanOrEqualTo(started.plus(operation));
      assertFailed(result, Status.Code.UNAVAILABLE, "DATABASE_TIMEOUT");
    }
  }

  // The caller's deadline and cancellation

  @Test
  void firstAttempt_getsNoMoreThanTheCallersDeadlineLeaves() {
    Context.CancellableContext call = withDeadline(Duration.ofMillis(100));

    inside(call, () -> run(calls(Duration.ofSeconds(10)), "answer"));

    assertThat(attempts).singleElement().extracting(Attempt::timeout).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void deadlinePassingDuringAnAttempt_cancelsIt_andStartsNoOther() {
    Context.CancellableContext call = withDeadline(Duration.ofMillis(100));
    CompletableFuture<String> result = inside(call, () -> calls(Duration.ofSeconds(10))
        .run(timeout -> record(timeout, new CompletableFuture<>())));

    time.advance(Duration.ofMillis(100));

    assertThat(attempts).singleElement().satisfies(a -> assertThat(a.future()).isCancelled());
    assertFailed(result, Status.Code.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED");
    time.runAll();
    assertThat(attempts).hasSize(1);
  }

  @Test
  void callerCancelling_cancelsTheAttemptInFlight_andStartsNoOther() {
    Context.CancellableContext call = Context.current().withCancellation();
    CompletableFuture<String> result = inside(call, () -> calls(OPERATION)
        .run(timeout -> record(timeout, new CompletableFuture<>())));

    call.cancel(null);

    assertThat(attempts).singleElement().satisfies(a -> assertThat(a.future()).isCancelled());
    assertFailed(result, Status.Code.CANCELLED, "CANCELLED");
    time.runAll();
    assertThat(attempts).hasSize(1);
  }

  @Test
  void deadlineAlreadyPassed_sendsNothing() {
    Context.CancellableContext call = withDeadline(Duration.ZERO);

    CompletableFuture<String> result = inside(call, () -> run(calls(OPERATION), "never asked for"));

    assertThat(attempts).isEmpty();
    assertFailed(result, Status.Code.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED");
  }

  @Test
  void tooLittleTimeLeftForAnAnswer_sendsNothing() {
    Context.CancellableContext call = withDeadline(DynamoCalls.MIN_ATTEMPT.minusMillis(1));

    CompletableFuture<String> result = inside(call, () -> run(calls(OPERATION), "never asked for"));

    assertThat(attempts).isEmpty();
    assertThat(result).isCompletedExceptionally();
  }

  @Test
  void retriesUnderACallersDeadline_neverStartOrRunPastIt() {
    Duration deadline = Duration.ofMillis(150);
    for (int call = 0; call < 50; call++) {
      attempts.clear();
      Duration started = now();
      Context.CancellableContext context = withDeadline(deadline);
      // Each attempt is throttled after 10 ms, or hangs to its timeout if that is sooner.
      CompletableFuture<String> result = inside(context, () -> calls(Duration.ofSeconds(10)).run(timeout -> {
        CompletableFuture<String> future = record(timeout, new CompletableFuture<>());
        Duration answerIn = timeout.compareTo(Duration.ofMillis(10)) < 0 ? timeout : Duration.ofMillis(10);
        Throwable answer = answerIn.equals(timeout) ? ApiCallAttemptTimeoutException.create(timeout.toMillis()) : throttled();
        time.schedule(() -> {
          future.completeExceptionally(answer);
        }, answerIn.toNanos(), TimeUnit.NANOSECONDS);
        return future;
      }));
      time.runAll();

      assertThat(attempts).hasSizeGreaterThan(1);
      assertThat(attempts).allSatisfy(a -> {
        assertThat(a.startedAt()).isLessThanOrEqualTo(started.plus(deadline).minus(DynamoCalls.MIN_ATTEMPT));
        assertThat(a.startedAt().plus(a.timeout())).isLessThanOrEqualTo(started.plus(deadline));
      });
      // The layer answered before the deadline, with what the database said, not with the deadline.
      assertThat(Failures.cause(failure(result))).isNotInstanceOf(dev.warehouse.runtime.error.DeadlineExceededException.class);
      context.cancel(null);
    }
  }

  @Test
  void result_completesInTheCallersContext_evenWhenARetryOnTheSchedulerAnswers() {
    Context.Key<String> caller = Context.key("caller");
    Context call = Context.current().withValue(caller, "buyer-7");
    AtomicReference<String> seen = new AtomicReference<>();
    Context previous = call.attach();
    CompletableFuture<String> result;
    try {
      result = run(calls(OPERATION), throttled(), "answer");
      result.thenRun(() -> seen.set(caller.get()));
    } finally {
      call.detach(previous);
    }

    time.runAll(); // the retry runs here, on the test's thread, outside the caller's context

    assertThat(result).isCompletedWithValue("answer");
    assertThat(seen.get()).as("the stage chained on the result runs in the caller's context").isEqualTo("buyer-7");
  }

  // Metrics

  @Test
  void countsCalls_byWhetherTheySucceeded_andWhetherTheyWereRetried() {
    DynamoCalls calls = calls(OPERATION);
    run(calls, "answer");
    run(calls, throttled(), "answer");
    run(calls, throttled(), "answer");
    run(calls, throttled(), throttled(), throttled(), throttled());
    run(calls, service(ConditionalCheckFailedException.builder(), 400));
    time.runAll();

    assertThat(retryCalls("successful_without_retry")).isEqualTo(1);
    assertThat(retryCalls("successful_with_retry")).isEqualTo(2);
    assertThat(retryCalls("failed_with_retry")).isEqualTo(1);
    assertThat(retryCalls("failed_without_retry")).isEqualTo(1);
  }

  // Helpers

  private DynamoCalls calls(Duration operation) {
    return new DynamoCalls(time, meters, operation, time::nanoTime);
  }

  /**
   * Runs one call whose attempts answer, in turn: a {@link Throwable} fails the attempt at once, a
   * {@link String} succeeds with it.
   */
  private CompletableFuture<String> run(DynamoCalls calls, Object... answers) {
    int[] made = {0};
    Function<Duration, CompletableFuture<String>> attempt = timeout -> {
      int index = made[0]++;
      CompletableFuture<String> future = new CompletableFuture<>();
      if (index >= answers.length) {
        future.completeExceptionally(new AssertionError("attempt " + (index + 1) + " was not expected"));
      } else if (answers[index] instanceof Throwable failure) {
        future.completeExceptionally(failure);
      } else {
        future.complete((String) answers[index]);
      }
      return record(timeout, future);
    };
    return calls.run(attempt);
  }

  private CompletableFuture<String> record(Duration timeout, CompletableFuture<String> future) {
    attempts.add(new Attempt(now(), timeout, future));
    return future;
  }

  private Duration now() {
    return Duration.ofNanos(time.nanoTime());
  }

  private Context.CancellableContext withDeadline(Duration in) {
    return Context.current().withDeadline(Deadline.after(in.toNanos(), TimeUnit.NANOSECONDS, time.ticker()), time);
  }

  private static <T> T inside(Context context, java.util.function.Supplier<T> action) {
    Context previous = context.attach();
    try {
      return action.get();
    } finally {
      context.detach(previous);
    }
  }

  private double retryCalls(String kind) {
    FunctionCounter counter = meters.find("resilience4j.retry.calls")
        .tags("name", DynamoCalls.RETRY_NAME, "kind", kind).functionCounter();
    assertThat(counter).as(kind).isNotNull();
    return counter.count();
  }

  private static Throwable failure(CompletableFuture<?> result) {
    assertThat(result).isCompletedExceptionally();
    return Failures.cause(result.handle((value, failure) -> failure).join());
  }

  private static void assertFailed(CompletableFuture<?> result, Status.Code code, String reason) {
    Throwable failure = failure(result);
    assertThat(failure).isInstanceOf(ClientFacingException.class);
    assertThat(((ClientFacingException) failure).reason()).isEqualTo(reason);
    assertThat(GrpcErrors.toStatusException(failure).getStatus().getCode()).isEqualTo(code);
  }

  private static Throwable throttled() {
    return service(ProvisionedThroughputExceededException.builder(), 400);
  }

  /** The SDK's modelled exception, as its unmarshaller builds it. */
  private static Throwable service(AwsServiceException.Builder builder, int httpStatus) {
    String code = builder.getClass().getEnclosingClass() == null ? "" : builder.getClass().getEnclosingClass().getSimpleName();
    return builder.message("fault").statusCode(httpStatus)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage("fault").build()).build();
  }

  /** An error code the SDK has no class for. */
  private static Throwable generic(String code, int httpStatus) {
    return DynamoDbException.builder().message("fault").statusCode(httpStatus)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage("fault").build()).build();
  }

  private static Throwable cancelled(String... codes) {
    return TransactionCanceledException.builder().message("fault").statusCode(400)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode("TransactionCanceledException").build())
        .cancellationReasons(Stream.of(codes).map(c -> CancellationReason.builder().code(c).build()).toList())
        .build();
  }
}
