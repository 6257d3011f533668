package dev.warehouse.order.domain;

import java.time.Duration;

/**
 * How long the order saga's steps may take.
 *
 * @param stepGrace  how long after a step is owed the recovery takes it over ({@code ORDER_STEP_GRACE_SECONDS}):
 *                   the call that owes it has had its chance by then
 * @param hold       how long the inventory holds a PENDING order's stock unless it is confirmed
 *                   ({@code ORDER_HOLD_SECONDS}, asked for in every ReserveStock): longer than the grace, so the
 *                   recovery finds a held order still held and places it
 * @param stepBudget how long a status change waits for the RELEASE or COMMIT it owes before it answers with the
 *                   step still owed, for the recovery ({@code ORDER_STEP_BUDGET_MS})
 */
public record SagaTimings(Duration stepGrace, Duration hold, Duration stepBudget) {

  /** The longest hold the inventory's contract grants (ReserveStockRequest.hold_duration). */
  public static final Duration MAX_HOLD = Duration.ofMinutes(15);

  public SagaTimings {
    if (stepGrace.isNegative() || stepGrace.isZero() || stepBudget.isNegative() || stepBudget.isZero()) {
      throw new IllegalArgumentException("the step grace and the step budget must be positive");
    }
    if (hold.compareTo(stepGrace) <= 0) {
      throw new IllegalArgumentException("the hold (" + hold.toSeconds() + " s) must be longer than the step grace ("
          + stepGrace.toSeconds() + " s): the recovery would find held orders released and reject them");
    }
    if (hold.compareTo(MAX_HOLD) > 0) {
      throw new IllegalArgumentException("the hold must be at most " + MAX_HOLD.toMinutes() + " minutes, the contract's limit");
    }
  }
}
