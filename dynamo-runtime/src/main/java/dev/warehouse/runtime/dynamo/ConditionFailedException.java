package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.error.FailedPreconditionException;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;

/**
 * A write whose condition did not hold: a single-item write's, or one or more items' of a transaction
 * (whose other items, if any, did not conflict). Carries, per item of the request in order, whether
 * its condition failed and the item as it was ({@code ReturnValuesOnConditionCheckFailure=ALL_OLD}),
 * so the repository can say what it means in domain terms (a replay, a reused request id, too little
 * stock). Left untranslated it is still a proper FAILED_PRECONDITION, never an INTERNAL.
 */
public final class ConditionFailedException extends FailedPreconditionException {

  private static final String CONDITION_FAILED = "ConditionalCheckFailed";

  private final List<CancellationReason> reasons;

  ConditionFailedException(List<CancellationReason> reasons, Throwable cause) {
    super("CONDITION_FAILED", "the data changed: a condition of the write no longer holds", Map.of(), cause);
    this.reasons = List.copyOf(reasons);
  }

  /** Whether the condition of the {@code index}th item of the request failed. */
  public boolean failed(int index) {
    return index < reasons.size() && CONDITION_FAILED.equals(reasons.get(index).code());
  }

  /** The {@code index}th item as it was when its condition failed; empty when it did not exist (or did not fail). */
  public Map<String, AttributeValue> item(int index) {
    if (!failed(index)) {
      return Map.of();
    }
    Map<String, AttributeValue> item = reasons.get(index).item();
    return item == null ? Map.of() : item;
  }
}
