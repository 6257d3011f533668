package dev.warehouse.inventory.domain;

import java.util.List;
import java.util.Objects;

/**
 * Units of one product at one warehouse, held for an order.
 *
 * @param takes where the store took the units from, for stock spread over buckets (empty until held; a
 *              reservation stored before buckets took all from bucket 0). Bookkeeping of the store, so
 *              two lines are equal when they hold the same units of the same stock, wherever from.
 */
public record ReservationLine(String productId, String warehouseId, long quantity, List<Take> takes) {

  /** Units of a line taken from one bucket of its stock. */
  public record Take(int bucket, long quantity) {}

  public ReservationLine {
    takes = List.copyOf(takes);
  }

  /** A line not held yet. */
  public ReservationLine(String productId, String warehouseId, long quantity) {
    this(productId, warehouseId, quantity, List.of());
  }

  /** This line as held from {@code from}. */
  public ReservationLine takenFrom(List<Take> from) {
    return new ReservationLine(productId, warehouseId, quantity, from);
  }

  /** Where its units were taken from: bucket 0 for a line held before stock was split. */
  public List<Take> takesOrWhole() {
    return takes.isEmpty() ? List.of(new Take(0, quantity)) : takes;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ReservationLine that && productId.equals(that.productId)
        && warehouseId.equals(that.warehouseId) && quantity == that.quantity;
  }

  @Override
  public int hashCode() {
    return Objects.hash(productId, warehouseId, quantity);
  }

  /** Lines of the same stock record merged (quantities added), in product then warehouse order. */
  public static List<ReservationLine> merged(List<ReservationLine> lines) {
    java.util.SortedMap<String, ReservationLine> byStock = new java.util.TreeMap<>();
    for (ReservationLine line : lines) {
      // '#' never occurs in an id, so the key orders by product, then warehouse.
      byStock.merge(line.productId() + "#" + line.warehouseId(), line,
          (a, b) -> new ReservationLine(a.productId(), a.warehouseId(), a.quantity() + b.quantity()));
    }
    return List.copyOf(byStock.values());
  }
}
