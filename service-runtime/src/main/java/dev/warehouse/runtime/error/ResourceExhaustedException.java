package dev.warehouse.runtime.error;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Capacity is exhausted (the database is throttling us, or the service is at its concurrency limit);
 * the caller may retry after backing off, after {@link #retryDelay()} when one is given (sent as
 * {@code google.rpc.RetryInfo}). Maps to RESOURCE_EXHAUSTED.
 */
public final class ResourceExhaustedException extends ClientFacingException {

  private final Optional<Duration> retryDelay;

  public ResourceExhaustedException(String reason, String message, Throwable cause) {
    super(reason, message, Map.of(), cause);
    this.retryDelay = Optional.empty();
  }

  /** Exhausted for {@code cause} (the database's throttling, say), with a delay to retry after. */
  public ResourceExhaustedException(String reason, String message, Duration retryDelay, Throwable cause) {
    super(reason, message, Map.of(), cause);
    this.retryDelay = Optional.of(retryDelay);
  }

  /** Refused without a cause, with the variables of its {@code ErrorInfo} and a delay to retry after. */
  public ResourceExhaustedException(String reason, String message, Map<String, String> metadata, Duration retryDelay) {
    super(reason, message, metadata, null);
    this.retryDelay = Optional.of(retryDelay);
  }

  public Optional<Duration> retryDelay() {
    return retryDelay;
  }
}
