package dev.warehouse.order.domain;

import java.util.List;

/**
 * Why an order was not placed, kept with it so a retry of its PlaceOrder answers the same.
 *
 * @param reason    {@link #OUT_OF_STOCK}, {@link #NOT_STOCKED}, {@link #TOO_LARGE}, {@link #HOLD_EXPIRED} or
 *                  {@link #ABANDONED}
 * @param shortages the short lines (OUT_OF_STOCK), or the line whose product is not stocked (NOT_STOCKED)
 */
public record Rejection(String reason, List<Shortage> shortages) {

  /** A line asked for more than was available. */
  public static final String OUT_OF_STOCK = "OUT_OF_STOCK";
  /** A line's product is not stocked at its warehouse. */
  public static final String NOT_STOCKED = "PRODUCT_INVENTORY_NOT_FOUND";
  /** Its lines of split stock would need more items than one transaction takes: nothing was held. */
  public static final String TOO_LARGE = "RESERVATION_TOO_LARGE";
  /** The stock was held, but released before the order was confirmed (its hold expired). */
  public static final String HOLD_EXPIRED = "HOLD_EXPIRED";
  /** The recovery found no stock held for a PENDING order past its deadline, and gave up on it. */
  public static final String ABANDONED = "ABANDONED";

  public Rejection {
    shortages = List.copyOf(shortages);
  }
}
