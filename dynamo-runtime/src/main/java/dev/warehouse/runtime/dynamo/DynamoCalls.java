package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.admission.Admission;
import dev.warehouse.runtime.dynamo.DynamoErrors.CallEndedException;
import dev.warehouse.runtime.dynamo.DynamoErrors.FinalAttemptException;
import dev.warehouse.runtime.error.Failures;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.micrometer.tagged.TaggedRetryMetrics;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.grpc.Context;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;

/**
 * The one retry layer of every DynamoDB request a service makes (the SDK's own retries are off): a
 * resilience4j {@link Retry} named {@value #RETRY_NAME}, exponential backoff from
 * {@link #INITIAL_BACKOFF} (×2, ±50 % jitter), at most {@link #MAX_ATTEMPTS} attempts, on the failures
 * {@link DynamoErrors#isTransient} calls transient.
 *
 * <p>Budgets come from the caller. An operation (all its attempts) gets at most
 * {@code DYNAMODB_CALL_TIMEOUT_MS}, and never more than the gRPC call's remaining deadline; each
 * attempt gets at most a {@link #MAX_ATTEMPTS}th of the operation's time, and never more than is left.
 * A transient failure is retried only while an attempt and its backoff still fit. When the caller
 * cancels, or its deadline passes, the attempt in flight is cancelled and none follows. So a call
 * never outlives its caller's deadline, and layers never multiply past it.
 */
public final class DynamoCalls {

  /** Attempts of one DynamoDB operation, first try included. */
  public static final int MAX_ATTEMPTS = 4;
  /** First backoff; doubled each retry, with ±50 % jitter. */
  public static final Duration INITIAL_BACKOFF = Duration.ofMillis(25);
  /** The name of the resilience4j retry (its metrics' {@code name} label). */
  public static final String RETRY_NAME = "dynamodb";
  /** No attempt starts with less time than this left: it could not get an answer back. */
  static final Duration MIN_ATTEMPT = Duration.ofMillis(5);

  private final Retry retry;
  private final ScheduledExecutorService scheduler;
  private final long operationNanos;
  private final long attemptNanos;
  private final LongSupplier nanoTime;

  /**
   * @param scheduler      where backoffs wait; its tasks only start attempts, never block
   * @param operationTimeout the time of one operation, all attempts included ({@code DYNAMODB_CALL_TIMEOUT_MS})
   */
  public DynamoCalls(ScheduledExecutorService scheduler, MeterRegistry meters, Duration operationTimeout) {
    this(scheduler, meters, operationTimeout, System::nanoTime);
  }

  DynamoCalls(ScheduledExecutorService scheduler, MeterRegistry meters, Duration operationTimeout, LongSupplier nanoTime) {
    this.scheduler = scheduler;
    this.operationNanos = operationTimeout.toNanos();
    this.attemptNanos = operationTimeout.dividedBy(MAX_ATTEMPTS).toNanos();
    this.nanoTime = nanoTime;
    RetryRegistry registry = RetryRegistry.of(RetryConfig.custom()
        .maxAttempts(MAX_ATTEMPTS)
        .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(INITIAL_BACKOFF, 2.0, 0.5))
        .retryOnException(DynamoErrors::isTransient)
        .build());
    this.retry = registry.retry(RETRY_NAME);
    TaggedRetryMetrics.ofRetryRegistry(registry).bindTo(meters);
  }

  /**
   * Runs {@code attempt} (given its timeout) until it succeeds, fails for good, or the caller's call
   * ends. {@code attempt} must return the SDK's own future, so that cancelling it aborts the request.
   * The result completes in the caller's gRPC context, failed with a domain exception
   * ({@link DynamoErrors#translate}).
   */
  public <R> CompletableFuture<R> run(Function<Duration, CompletableFuture<R>> attempt) {
    CallScope scope = CallScope.current();
    // A call's first store call takes its slot of the concurrency limit, waiting briefly for one; refused, it
    // sends nothing.
    CompletableFuture<Void> admitted = Admission.enter();
    if (admitted.isDone() && !admitted.isCompletedExceptionally()) {
      return admittedRun(scope, attempt);
    }
    CompletableFuture<R> result = new CompletableFuture<>();
    admitted.whenComplete((ok, refused) -> scope.run(() -> {
      if (refused != null) {
        result.completeExceptionally(DynamoErrors.translate(refused));
      } else {
        admittedRun(scope, attempt).whenComplete((value, failure) -> {
          if (failure == null) {
            result.complete(value);
          } else {
            result.completeExceptionally(Failures.cause(failure));
          }
        });
      }
    }));
    return result;
  }

  private <R> CompletableFuture<R> admittedRun(CallScope scope, Function<Duration, CompletableFuture<R>> attempt) {
    long started = nanoTime.getAsLong();
    long end = started + Math.min(operationNanos, scope.remainingNanos());
    int[] attempts = {0};
    CompletableFuture<R> result = new CompletableFuture<>();
    retry.executeCompletionStage(scheduler, () -> attempt(scope, attempt, end, ++attempts[0]))
        .whenComplete((value, failure) -> scope.run(() -> {
          if (failure == null) {
            result.complete(value);
          } else {
            result.completeExceptionally(DynamoErrors.translate(failure));
          }
        }));
    return result;
  }

  private <R> CompletionStage<R> attempt(CallScope scope, Function<Duration, CompletableFuture<R>> attempt, long end,
      int number) {
    if (scope.ended()) {
      return CompletableFuture.failedFuture(new CallEndedException(scope.deadlinePassed(), null));
    }
    long left = end - nanoTime.getAsLong();
    if (left < MIN_ATTEMPT.toNanos()) {
      // The backoff used up the operation's time (the caller's deadline is checked above).
      return CompletableFuture.failedFuture(new FinalAttemptException(
          ApiCallTimeoutException.create(TimeUnit.NANOSECONDS.toMillis(operationNanos))));
    }
    // In the call's context: a retry starts on the timer's thread, and the request's span is a child of the call's.
    CompletableFuture<R> call = scope.call(() -> attempt.apply(Duration.ofNanos(Math.min(attemptNanos, left))));
    Context.CancellationListener onEnd = scope.onEnd(() -> call.cancel(true));
    return call.handle((value, failure) -> {
      scope.removeListener(onEnd);
      if (failure == null) {
        return value;
      }
      if (scope.ended()) {
        throw new CallEndedException(scope.deadlinePassed(), failure);
      }
      if (DynamoErrors.isTransient(failure) && !roomForAnother(end, number)) {
        throw new FinalAttemptException(failure);
      }
      throw failure instanceof CompletionException ce ? ce : new CompletionException(failure);
    });
  }

  /** Whether another attempt, after the longest backoff it may wait, would still have {@link #MIN_ATTEMPT}. */
  private boolean roomForAnother(long end, int attemptsMade) {
    if (attemptsMade >= MAX_ATTEMPTS) {
      return true; // the retry stops by itself; the failure keeps its own meaning
    }
    long longestBackoff = (long) (INITIAL_BACKOFF.toNanos() * Math.pow(2, attemptsMade - 1) * 1.5);
    return end - nanoTime.getAsLong() >= longestBackoff + MIN_ATTEMPT.toNanos();
  }
}
