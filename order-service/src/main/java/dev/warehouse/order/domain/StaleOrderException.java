package dev.warehouse.order.domain;

/**
 * The order changed between our read and our write (its version moved on). Internal to the
 * read-modify-write loop of a status change; never sent to a client as such.
 */
public final class StaleOrderException extends RuntimeException {

  public StaleOrderException(String orderId) {
    super("order " + orderId + " changed concurrently", null, false, false);
  }
}
