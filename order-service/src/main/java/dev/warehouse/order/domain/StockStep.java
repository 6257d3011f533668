package dev.warehouse.order.domain;

/**
 * What an order still owes the inventory-service: the step is written with the status that owes it, in
 * the same transaction, and removed once the inventory has answered, so a crash in between leaves it for
 * the recovery ({@link OrderService#recover}) to finish. Every step is idempotent by order id at the inventory.
 */
public enum StockStep {
  /** A PENDING order: hold its stock, then place it (or reject it). */
  PLACE,
  /** A cancelled or rejected order: give its held stock back (or leave a tombstone). */
  RELEASE,
  /** A shipped order: take its stock from the warehouse. */
  COMMIT
}
