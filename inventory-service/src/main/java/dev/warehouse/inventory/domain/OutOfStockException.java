package dev.warehouse.inventory.domain;

import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.PreconditionViolation;
import java.util.List;
import java.util.Map;

/**
 * A reservation's lines that are short: FAILED_PRECONDITION OUT_OF_STOCK, one violation per short line in
 * words, and the numbers themselves ({@link #shortages()}) for the transport to send as a typed detail.
 */
public class OutOfStockException extends FailedPreconditionException {

  public static final String REASON = "OUT_OF_STOCK";

  /** One short line: what it asked for and what was available. */
  public record Shortage(String productId, String warehouseId, long requested, long available) {}

  private final transient List<Shortage> shortages;

  public OutOfStockException(String orderId, int lines, List<Shortage> shortages) {
    super(REASON, "order " + orderId + " asks for more than is available on " + shortages.size() + " of its " + lines
            + " lines: nothing was held",
        Map.of("order_id", orderId, "short_lines", Integer.toString(shortages.size())),
        shortages.stream().map(s -> new PreconditionViolation(REASON,
            "products/" + s.productId() + "/warehouses/" + s.warehouseId(),
            "requested " + s.requested() + ", available " + s.available())).toList());
    this.shortages = List.copyOf(shortages);
  }

  public List<Shortage> shortages() {
    return shortages;
  }
}
