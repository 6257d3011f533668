package dev.warehouse.runtime.error;

import java.util.Map;

/**
 * The system is not in the state the operation needs (insufficient stock, a forbidden status change,
 * a write's condition that did not hold). Maps to FAILED_PRECONDITION.
 */
public class FailedPreconditionException extends ServiceException {

  public FailedPreconditionException(String reason, String message, Map<String, String> metadata) {
    super(reason, message, metadata);
  }

  public FailedPreconditionException(String reason, String message) {
    this(reason, message, Map.of());
  }

  /** The cause is kept for the server log only. */
  public FailedPreconditionException(String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(reason, message, metadata, cause);
  }
}
