package dev.warehouse.order.domain;

import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.PreconditionViolation;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Some lines of an order could not be held: FAILED_PRECONDITION, reason {@value #REASON}, one violation per line. */
public final class OutOfStockException extends FailedPreconditionException {

  public static final String REASON = "OUT_OF_STOCK";

  private final List<Shortage> shortages;

  public OutOfStockException(String orderId, List<Shortage> shortages) {
    super(REASON, "order " + orderId + " cannot be placed: too little stock for "
            + shortages.stream().map(s -> "product " + s.productId() + " at warehouse " + s.warehouseId() + " ("
                + s.requested() + " requested, " + s.available() + " available)").collect(Collectors.joining(", ")),
        Map.of("order_id", orderId), shortages.stream().map(s -> new PreconditionViolation(REASON,
            "products/" + s.productId() + "/warehouses/" + s.warehouseId(),
            "requested " + s.requested() + ", available " + s.available())).toList());
    this.shortages = List.copyOf(shortages);
  }

  public List<Shortage> shortages() {
    return shortages;
  }
}
