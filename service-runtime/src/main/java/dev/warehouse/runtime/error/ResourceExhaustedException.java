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
  private final Optional<QuotaViolation> quota;

  /**
   * A quota the caller went past ({@code google.rpc.QuotaFailure}'s violation).
   *
   * @param subject     whose quota, such as {@code caller:alice}
   * @param description which limit, and its value
   */
  public record QuotaViolation(String subject, String description) {}

  public ResourceExhaustedException(String reason, String message, Throwable cause) {
    super(reason, message, Map.of(), cause);
    this.retryDelay = Optional.empty();
    this.quota = Optional.empty();
  }

  /** Exhausted for {@code cause} (the database's throttling, say), with a delay to retry after. */
  public ResourceExhaustedException(String reason, String message, Duration retryDelay, Throwable cause) {
    super(reason, message, Map.of(), cause);
    this.retryDelay = Optional.of(retryDelay);
    this.quota = Optional.empty();
  }

  /** Refused without a cause, with the variables of its {@code ErrorInfo} and a delay to retry after. */
  public ResourceExhaustedException(String reason, String message, Map<String, String> metadata, Duration retryDelay) {
    this(reason, message, metadata, retryDelay, null);
  }

  /** Refused for a quota the caller went past ({@code quota}: sent as a {@code google.rpc.QuotaFailure}). */
  public ResourceExhaustedException(String reason, String message, Map<String, String> metadata, Duration retryDelay,
      QuotaViolation quota) {
    super(reason, message, metadata, null);
    this.retryDelay = Optional.of(retryDelay);
    this.quota = Optional.ofNullable(quota);
  }

  public Optional<QuotaViolation> quota() {
    return quota;
  }

  public Optional<Duration> retryDelay() {
    return retryDelay;
  }
}
