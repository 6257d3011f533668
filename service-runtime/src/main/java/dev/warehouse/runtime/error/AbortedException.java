package dev.warehouse.runtime.error;

import java.util.Map;

/** A concurrency conflict (stale version, conflicting transaction); the caller may retry the whole read-modify-write. Maps to ABORTED. */
public final class AbortedException extends ServiceException {

  public AbortedException(String reason, String message, Map<String, String> metadata) {
    super(reason, message, metadata);
  }

  public AbortedException(String reason, String message) {
    this(reason, message, Map.of());
  }

  /** The cause is kept for the server log only. */
  public AbortedException(String reason, String message, Throwable cause) {
    super(reason, message, Map.of(), cause);
  }
}
