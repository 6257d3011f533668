package dev.warehouse.runtime.error;

import java.util.List;
import java.util.Map;

/**
 * The system is not in the state the operation needs (insufficient stock, a forbidden status change,
 * a write's condition that did not hold). Maps to FAILED_PRECONDITION.
 */
public class FailedPreconditionException extends ClientFacingException {

  private final List<PreconditionViolation> violations;
  private final List<com.google.protobuf.Message> details;

  public FailedPreconditionException(String reason, String message, Map<String, String> metadata) {
    this(reason, message, metadata, List.of());
  }

  /**
   * With one {@link PreconditionViolation} per unmet precondition (one per short line of an order, say),
   * sent as a {@code google.rpc.PreconditionFailure} beside the ErrorInfo.
   */
  public FailedPreconditionException(String reason, String message, Map<String, String> metadata,
      List<PreconditionViolation> violations) {
    this(reason, message, metadata, violations, List.of());
  }

  /**
   * With {@code details} too, sent as they are beside the others: a contract's own typed detail, built in the
   * transport layer from the domain's values (the numbers of an OUT_OF_STOCK, say).
   */
  public FailedPreconditionException(String reason, String message, Map<String, String> metadata,
      List<PreconditionViolation> violations, List<com.google.protobuf.Message> details) {
    super(reason, message, metadata);
    this.violations = List.copyOf(violations);
    this.details = List.copyOf(details);
  }

  public FailedPreconditionException(String reason, String message) {
    this(reason, message, Map.of());
  }

  /** The cause is kept for the server log only. */
  public FailedPreconditionException(String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(reason, message, metadata, cause);
    this.violations = List.of();
    this.details = List.of();
  }

  /** The unmet preconditions, one by one; empty when the reason says it all. */
  public List<PreconditionViolation> violations() {
    return violations;
  }

  /** Typed details of the contract, sent beside the ErrorInfo; empty for most. */
  public List<com.google.protobuf.Message> details() {
    return details;
  }
}
