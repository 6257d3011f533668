package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.error.ServiceException;
import dev.warehouse.runtime.error.UnavailableException;
import java.util.concurrent.CompletionException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * Translates SDK failures at the store boundary, so nothing from {@code software.amazon.awssdk}
 * reaches gRPC code. Conditional-check failures are not handled here: each repository turns them into
 * the domain error they mean.
 */
public final class DynamoErrors {

  private DynamoErrors() {}

  /** The error of a throttled request, whether DynamoDB said so for the call or for a transaction item. */
  public static ResourceExhaustedException throttled(Throwable cause) {
    return new ResourceExhaustedException("DATABASE_THROTTLED", "the database is throttling requests; retry later", cause);
  }

  /** Returns the domain exception for {@code failure}, or the failure itself when it has no domain meaning. */
  public static RuntimeException translate(Throwable failure) {
    Throwable cause = Failures.cause(failure);
    if (cause instanceof ServiceException se) {
      return se;
    }
    if (cause instanceof ApiCallTimeoutException || cause instanceof ApiCallAttemptTimeoutException) {
      return new UnavailableException("DATABASE_TIMEOUT", "the database did not answer in time", cause);
    }
    if (cause instanceof DynamoDbException db) {
      if (db.isThrottlingException()) {
        return throttled(db);
      }
      if (db.statusCode() >= 500) {
        return new UnavailableException("DATABASE_UNAVAILABLE", "the database is unavailable", db);
      }
    }
    if (cause instanceof SdkClientException) {
      return new UnavailableException("DATABASE_UNAVAILABLE", "the database is unreachable", cause);
    }
    return cause instanceof RuntimeException re ? re : new CompletionException(cause);
  }
}
