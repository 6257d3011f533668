package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.CancelledException;
import dev.warehouse.runtime.error.DeadlineExceededException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.error.UnavailableException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.IdempotentParameterMismatchException;
import software.amazon.awssdk.services.dynamodb.model.IndexNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ItemCollectionSizeLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.LimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.ReplicatedWriteConflictException;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.TableNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.TransactionConflictException;
import software.amazon.awssdk.services.dynamodb.model.TransactionInProgressException;

/**
 * The one translation of DynamoDB failures into domain errors, at the store boundary, so nothing from
 * {@code software.amazon.awssdk} reaches gRPC code and nothing DynamoDB documents reaches a client as
 * INTERNAL. Also decides which failures are worth another attempt ({@link #isTransient}).
 *
 * <table>
 *   <caption>What each failure becomes (after the retries, for transient ones)</caption>
 *   <tr><th>DynamoDB says</th><th>status</th><th>reason</th></tr>
 *   <tr><td>a condition failed (single write or transaction item)</td><td>FAILED_PRECONDITION</td><td>CONDITION_FAILED ({@link ConditionFailedException}; repositories give it its domain meaning)</td></tr>
 *   <tr><td>TransactionConflict, TransactionConflictException, ReplicatedWriteConflictException</td><td>ABORTED</td><td>TRANSACTION_CONFLICT</td></tr>
 *   <tr><td>TransactionInProgressException</td><td>ABORTED</td><td>TRANSACTION_IN_PROGRESS</td></tr>
 *   <tr><td>IdempotentParameterMismatchException</td><td>ABORTED</td><td>IDEMPOTENCY_TOKEN_MISMATCH</td></tr>
 *   <tr><td>throttling of any kind (ProvisionedThroughputExceeded, RequestLimitExceeded, Throttling, LimitExceeded, a
 *   transaction cancelled with ThrottlingError)</td><td>RESOURCE_EXHAUSTED, with a RetryInfo of
 *   {@link #THROTTLED_RETRY_AFTER}</td><td>DATABASE_THROTTLED</td></tr>
 *   <tr><td>ItemCollectionSizeLimitExceeded</td><td>RESOURCE_EXHAUSTED</td><td>ITEM_COLLECTION_FULL</td></tr>
 *   <tr><td>ResourceNotFound, TableNotFound, IndexNotFound</td><td>FAILED_PRECONDITION</td><td>DATABASE_TABLE_NOT_FOUND</td></tr>
 *   <tr><td>AccessDenied, UnrecognizedClient, expired or bad credentials</td><td>UNAVAILABLE</td><td>DATABASE_ACCESS_DENIED</td></tr>
 *   <tr><td>ValidationException and any other 4xx</td><td>FAILED_PRECONDITION</td><td>DATABASE_REJECTED_REQUEST</td></tr>
 *   <tr><td>5xx, InternalServerError, unreachable endpoint</td><td>UNAVAILABLE</td><td>DATABASE_UNAVAILABLE</td></tr>
 *   <tr><td>the attempts' time ran out</td><td>UNAVAILABLE</td><td>DATABASE_TIMEOUT</td></tr>
 *   <tr><td>the caller's deadline passed</td><td>DEADLINE_EXCEEDED</td><td>DEADLINE_EXCEEDED</td></tr>
 *   <tr><td>the caller cancelled</td><td>CANCELLED</td><td>CANCELLED</td></tr>
 * </table>
 * The SDK's text is kept as the cause, for the server log only.
 */
public final class DynamoErrors {

  /**
   * What a caller still throttled after the layer's retries is told to wait: a hot key's units come back
   * within a second, and a shorter hint would send the caller back into the same throttle.
   */
  public static final java.time.Duration THROTTLED_RETRY_AFTER = java.time.Duration.ofMillis(250);
  private static final String CONDITION_FAILED = "ConditionalCheckFailed";
  private static final Set<String> CONFLICT_CODES = Set.of("TransactionConflict");
  private static final Set<String> THROTTLING_CODES = Set.of("ThrottlingError", "ProvisionedThroughputExceeded",
      "RequestLimitExceeded", "ThrottlingException");
  private static final Set<String> CREDENTIAL_CODES = Set.of("AccessDeniedException", "UnrecognizedClientException",
      "ExpiredTokenException", "MissingAuthenticationTokenException", "InvalidSignatureException",
      "IncompleteSignatureException", "InvalidClientTokenId", "SignatureDoesNotMatch");

  private DynamoErrors() {}

  /** Returns the domain exception for {@code failure}; a failure with no DynamoDB meaning is returned as it is (INTERNAL). */
  public static RuntimeException translate(Throwable failure) {
    Throwable cause = Failures.cause(failure);
    if (cause instanceof ClientFacingException se) {
      return se;
    }
    if (cause instanceof CallEndedException ended) {
      return ended.deadlinePassed()
          ? new DeadlineExceededException("DEADLINE_EXCEEDED", "the call's deadline passed before the database answered",
              ended.getCause())
          : new CancelledException("CANCELLED", "the call was cancelled");
    }
    if (cause instanceof FinalAttemptException last) {
      return translate(last.getCause());
    }
    if (cause instanceof ApiCallTimeoutException || cause instanceof ApiCallAttemptTimeoutException) {
      return new UnavailableException("DATABASE_TIMEOUT", "the database did not answer in time", cause);
    }
    if (cause instanceof TransactionCanceledException cancelled) {
      return cancelled(cancelled);
    }
    if (cause instanceof ConditionalCheckFailedException condition) {
      return new ConditionFailedException(List.of(CancellationReason.builder()
          .code(CONDITION_FAILED).item(condition.hasItem() ? condition.item() : Map.of()).build()), condition);
    }
    if (cause instanceof TransactionConflictException || cause instanceof ReplicatedWriteConflictException) {
      return conflict(cause);
    }
    if (cause instanceof TransactionInProgressException) {
      return new AbortedException("TRANSACTION_IN_PROGRESS",
          "an earlier attempt of this write is still being applied; retry the call", cause);
    }
    if (cause instanceof IdempotentParameterMismatchException) {
      return new AbortedException("IDEMPOTENCY_TOKEN_MISMATCH",
          "the database saw this write's idempotency token with different parameters; retry the call", cause);
    }
    if (cause instanceof ItemCollectionSizeLimitExceededException) {
      return itemCollectionFull(cause);
    }
    if (cause instanceof ResourceNotFoundException || cause instanceof TableNotFoundException
        || cause instanceof IndexNotFoundException) {
      return new FailedPreconditionException("DATABASE_TABLE_NOT_FOUND", "the service's table is not available", Map.of(),
          cause);
    }
    if (cause instanceof DynamoDbException db) {
      String code = errorCode(db);
      if (throttling(db) || cause instanceof LimitExceededException) {
        return throttled(db);
      }
      if (db.statusCode() >= 500) {
        return new UnavailableException("DATABASE_UNAVAILABLE", "the database is unavailable", db);
      }
      if (CREDENTIAL_CODES.contains(code) || db.statusCode() == 403) {
        return new UnavailableException("DATABASE_ACCESS_DENIED", "the service may not use its database now", db);
      }
      return new FailedPreconditionException("DATABASE_REJECTED_REQUEST", "the database refused the request", Map.of(), db);
    }
    if (cause instanceof SdkClientException) {
      return new UnavailableException("DATABASE_UNAVAILABLE", "the database is unreachable", cause);
    }
    return cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
  }

  /** A transaction cancelled for its items' reasons: a failed condition wins over everything else. */
  private static RuntimeException cancelled(TransactionCanceledException cancelled) {
    List<CancellationReason> reasons = cancelled.hasCancellationReasons() ? cancelled.cancellationReasons() : List.of();
    List<String> codes = reasons.stream().map(CancellationReason::code).toList();
    if (codes.contains(CONDITION_FAILED)) {
      return new ConditionFailedException(reasons, cancelled);
    }
    if (codes.stream().anyMatch(CONFLICT_CODES::contains)) {
      return conflict(cancelled);
    }
    if (codes.stream().anyMatch(THROTTLING_CODES::contains)) {
      return throttled(cancelled);
    }
    if (codes.contains("ItemCollectionSizeLimitExceeded")) {
      return itemCollectionFull(cancelled);
    }
    if (codes.contains("ValidationError")) {
      return new FailedPreconditionException("DATABASE_REJECTED_REQUEST", "the database refused the request", Map.of(),
          cancelled);
    }
    return new AbortedException("TRANSACTION_CANCELLED", "the database cancelled the write; retry the call", cancelled);
  }

  private static AbortedException conflict(Throwable cause) {
    return new AbortedException("TRANSACTION_CONFLICT", "the data was being changed by another write; retry the call", cause);
  }

  static ResourceExhaustedException throttled(Throwable cause) {
    return new ResourceExhaustedException("DATABASE_THROTTLED", "the database is throttling requests; retry later",
        THROTTLED_RETRY_AFTER, cause);
  }

  /** Whether a transaction was cancelled because the database throttled one of its items. */
  static boolean throttledTransaction(TransactionCanceledException cancelled) {
    return cancelled.hasCancellationReasons() && cancelled.cancellationReasons().stream()
        .map(CancellationReason::code).anyMatch(THROTTLING_CODES::contains);
  }

  private static ResourceExhaustedException itemCollectionFull(Throwable cause) {
    return new ResourceExhaustedException("ITEM_COLLECTION_FULL", "the partition holds as much data as it may", cause);
  }

  /**
   * Failures worth another attempt: they say nothing about the data, only about this moment
   * (conflicts, a transaction still in progress, throttling, 5xx, timeouts, dropped connections);
   * never a failed condition, a validation error, or the end of the caller's call.
   */
  static boolean isTransient(Throwable thrown) {
    Throwable failure = Failures.cause(thrown);
    if (failure instanceof CallEndedException || failure instanceof FinalAttemptException
        || failure instanceof CancellationException) {
      return false;
    }
    if (failure instanceof TransactionCanceledException cancelled) {
      if (!cancelled.hasCancellationReasons()) {
        return false;
      }
      List<String> codes = cancelled.cancellationReasons().stream().map(CancellationReason::code).toList();
      return !codes.contains(CONDITION_FAILED) && !codes.contains("ValidationError")
          && !codes.contains("ItemCollectionSizeLimitExceeded")
          && codes.stream().anyMatch(c -> CONFLICT_CODES.contains(c) || THROTTLING_CODES.contains(c));
    }
    if (failure instanceof TransactionConflictException || failure instanceof ReplicatedWriteConflictException
        || failure instanceof TransactionInProgressException) {
      return true;
    }
    if (failure instanceof DynamoDbException db) {
      return throttling(db) || db.statusCode() >= 500;
    }
    return failure instanceof SdkClientException && !(Failures.cause(failure.getCause()) instanceof CancellationException);
  }

  /** Whether DynamoDB throttled the request, by the exception's type or its error code. */
  static boolean throttling(DynamoDbException db) {
    return db.isThrottlingException() || db instanceof ProvisionedThroughputExceededException
        || db instanceof RequestLimitExceededException || THROTTLING_CODES.contains(errorCode(db));
  }

  private static String errorCode(DynamoDbException db) {
    return db.awsErrorDetails() == null ? "" : String.valueOf(db.awsErrorDetails().errorCode());
  }

  /** The caller's call ended (deadline or cancellation): no further attempt is made. */
  static final class CallEndedException extends RuntimeException {
    private final boolean deadlinePassed;

    CallEndedException(boolean deadlinePassed, Throwable lastFailure) {
      super(deadlinePassed ? "deadline passed" : "cancelled", lastFailure, false, false);
      this.deadlinePassed = deadlinePassed;
    }

    boolean deadlinePassed() {
      return deadlinePassed;
    }
  }

  /** A transient failure with no time left for another attempt: translated as its cause, never retried. */
  static final class FinalAttemptException extends RuntimeException {
    FinalAttemptException(Throwable cause) {
      super(cause.getMessage(), cause, false, false);
    }
  }
}
