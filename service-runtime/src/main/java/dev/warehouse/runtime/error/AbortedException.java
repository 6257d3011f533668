package dev.warehouse.runtime.error;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * A concurrency conflict (stale version, conflicting transaction, contended stock); the caller may retry the
 * whole read-modify-write, after {@link #retryDelay()} when it says (sent as a {@code google.rpc.RetryInfo}).
 * Maps to ABORTED.
 */
public final class AbortedException extends ClientFacingException {

  private final Optional<Duration> retryDelay;

  public AbortedException(String reason, String message, Map<String, String> metadata) {
    this(reason, message, metadata, Optional.empty());
  }

  /** With how long the caller should wait before retrying. */
  public AbortedException(String reason, String message, Map<String, String> metadata, Optional<Duration> retryDelay) {
    super(reason, message, metadata);
    this.retryDelay = retryDelay;
  }

  public AbortedException(String reason, String message) {
    this(reason, message, Map.of());
  }

  /** The cause is kept for the server log only. */
  public AbortedException(String reason, String message, Throwable cause) {
    super(reason, message, Map.of(), cause);
    this.retryDelay = Optional.empty();
  }

  public Optional<Duration> retryDelay() {
    return retryDelay;
  }
}
