package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.metrics.DynamoMetrics;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.micrometer.tagged.TaggedRetryMetrics;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * Runs {@code TransactWriteItems} with the one retry layer that owns its transient failures: a
 * resilience4j {@link Retry} with exponential backoff and jitter, on transaction conflicts,
 * throttling, 5xx, timeouts and dropped connections; never on a failed condition or a validation
 * error. The client it is given must not retry by itself (SDK max attempts 1), so one user call makes
 * at most {@link #MAX_ATTEMPTS} attempts, each bounded by its own timeout.
 *
 * <p>Metrics: {@code dynamodb_transaction_duration_seconds} (per call, retries included, with histogram
 * buckets), {@code dynamodb_transaction_attempts} (attempts per call), and
 * {@code dynamodb_transactions_total} by outcome; resilience4j's own retry metrics are bound too.
 */
public final class TransactionRunner {

  /** Attempts of one transaction, first try included. */
  public static final int MAX_ATTEMPTS = 4;
  /** First backoff; doubled each retry, with ±50 % jitter. */
  public static final Duration INITIAL_BACKOFF = Duration.ofMillis(25);

  /** How a transaction call ended, as the {@code outcome} label. */
  public enum Outcome {
    COMMITTED, IDEMPOTENT_REPLAY, CONDITION_FAILED, CONFLICT, THROTTLED, ERROR;

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private final DynamoDbAsyncClient dynamo;
  private final ScheduledExecutorService scheduler;
  private final MeterRegistry meters;
  private final Retry retry;
  private final Duration attemptTimeout;

  public TransactionRunner(DynamoDbAsyncClient dynamo, ScheduledExecutorService scheduler, MeterRegistry meters,
      Duration callTimeout) {
    this.dynamo = dynamo;
    this.scheduler = scheduler;
    this.meters = meters;
    this.attemptTimeout = callTimeout.dividedBy(MAX_ATTEMPTS);
    RetryRegistry registry = RetryRegistry.of(RetryConfig.custom()
        .maxAttempts(MAX_ATTEMPTS)
        .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(INITIAL_BACKOFF, 2.0, 0.5))
        .retryOnException(TransactionRunner::isTransient)
        .build());
    this.retry = registry.retry("dynamodb-transactions");
    TaggedRetryMetrics.ofRetryRegistry(registry).bindTo(meters);
  }

  /**
   * Runs the transaction of access pattern {@code patternId} (a write route, e.g. "W4"). Fails with the last SDK exception when it does not commit;
   * {@code isReplay} tells, for a transaction cancelled by a failed condition, whether that was an
   * idempotent replay (for the outcome metric only: the caller still decides what it means).
   */
  public CompletableFuture<Void> write(String operation, String patternId, TransactWriteItemsRequest request,
      Predicate<TransactionCanceledException> isReplay) {
    TransactWriteItemsRequest bounded = request.toBuilder()
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .overrideConfiguration(o -> o.apiCallTimeout(attemptTimeout).putExecutionAttribute(DynamoMetrics.ACCESS_PATTERN, patternId))
        .build();
    AtomicInteger attempts = new AtomicInteger();
    Timer.Sample sample = Timer.start(meters);
    return retry.executeCompletionStage(scheduler, () -> {
          attempts.incrementAndGet();
          return dynamo.transactWriteItems(bounded);
        })
        .toCompletableFuture()
        .handle((ok, failure) -> {
          Outcome outcome = failure == null ? Outcome.COMMITTED : classify(unwrap(failure), isReplay);
          sample.stop(Timer.builder("dynamodb.transaction.duration")
              .description("TransactWriteItems calls, retries included")
              .tags("operation", operation, "outcome", outcome.label())
              .register(meters));
          DistributionSummary.builder("dynamodb.transaction.attempts")
              .description("attempts per transaction call")
              .tags("operation", operation)
              .register(meters)
              .record(attempts.get());
          Counter.builder("dynamodb.transactions")
              .description("transaction calls by outcome")
              .tags("operation", operation, "outcome", outcome.label())
              .register(meters)
              .increment();
          if (failure != null) {
            throw failure instanceof CompletionException ce ? ce : new CompletionException(unwrap(failure));
          }
          return null;
        });
  }

  private static Outcome classify(Throwable failure, Predicate<TransactionCanceledException> isReplay) {
    if (failure instanceof TransactionCanceledException cancelled && cancelled.hasCancellationReasons()) {
      List<String> codes = cancelled.cancellationReasons().stream().map(CancellationReason::code).toList();
      if (codes.contains("ConditionalCheckFailed")) {
        return isReplay.test(cancelled) ? Outcome.IDEMPOTENT_REPLAY : Outcome.CONDITION_FAILED;
      }
      if (codes.contains("TransactionConflict")) {
        return Outcome.CONFLICT;
      }
      if (codes.contains("ThrottlingError")) {
        return Outcome.THROTTLED;
      }
    }
    if (failure instanceof DynamoDbException db && db.isThrottlingException()) {
      return Outcome.THROTTLED;
    }
    return Outcome.ERROR;
  }

  /**
   * Runs a single-item read under the same retry (the client itself makes one attempt): a pooled
   * connection closed under the request, a 5xx or throttling is retried; answers are never.
   */
  public <T> CompletableFuture<T> read(java.util.function.Supplier<CompletableFuture<T>> call) {
    return retry.executeCompletionStage(scheduler, call::get).toCompletableFuture();
  }

  /** Failures worth another attempt: they say nothing about the data, only about this moment. */
  static boolean isTransient(Throwable thrown) {
    Throwable failure = unwrap(thrown);
    if (failure instanceof TransactionCanceledException cancelled) {
      if (!cancelled.hasCancellationReasons()) {
        return false;
      }
      List<String> codes = cancelled.cancellationReasons().stream().map(CancellationReason::code).toList();
      return !codes.contains("ConditionalCheckFailed") && !codes.contains("ValidationError")
          && (codes.contains("TransactionConflict") || codes.contains("ThrottlingError"));
    }
    if (failure instanceof DynamoDbException db) {
      return db.isThrottlingException() || db.statusCode() >= 500
          || "TransactionInProgressException".equals(db.awsErrorDetails() == null ? null : db.awsErrorDetails().errorCode());
    }
    // Timeouts (ApiCallTimeoutException is an SdkClientException) and dropped connections.
    return failure instanceof SdkClientException;
  }

  private static Throwable unwrap(Throwable failure) {
    return Failures.cause(failure);
  }
}
