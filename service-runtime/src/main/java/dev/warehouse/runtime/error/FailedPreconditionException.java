package dev.warehouse.runtime.error;

import java.util.List;
import java.util.Map;

/**
 * The system is not in the state the operation needs (insufficient stock, a forbidden status change,
 * a write's condition that did not hold). Maps to FAILED_PRECONDITION.
 */
public class FailedPreconditionException extends ServiceException {

  private final List<PreconditionViolation> violations;

  public FailedPreconditionException(String reason, String message, Map<String, String> metadata) {
    this(reason, message, metadata, List.of());
  }

  /**
   * With one {@link PreconditionViolation} per unmet precondition (one per short line of an order, say),
   * sent as a {@code google.rpc.PreconditionFailure} beside the ErrorInfo.
   */
  public FailedPreconditionException(String reason, String message, Map<String, String> metadata,
      List<PreconditionViolation> violations) {
    super(reason, message, metadata);
    this.violations = List.copyOf(violations);
  }

  public FailedPreconditionException(String reason, String message) {
    this(reason, message, Map.of());
  }

  /** The cause is kept for the server log only. */
  public FailedPreconditionException(String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(reason, message, metadata, cause);
    this.violations = List.of();
  }

  /** The unmet preconditions, one by one; empty when the reason says it all. */
  public List<PreconditionViolation> violations() {
    return violations;
  }
}
