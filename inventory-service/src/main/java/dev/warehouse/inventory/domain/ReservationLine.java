package dev.warehouse.inventory.domain;

/** Units of one product at one warehouse, held for an order. */
public record ReservationLine(String productId, String warehouseId, long quantity) {

  /** Lines of the same stock record merged (quantities added), in product then warehouse order. */
  public static java.util.List<ReservationLine> merged(java.util.List<ReservationLine> lines) {
    java.util.SortedMap<String, ReservationLine> byStock = new java.util.TreeMap<>();
    for (ReservationLine line : lines) {
      // '#' never occurs in an id, so the key orders by product, then warehouse.
      byStock.merge(line.productId() + "#" + line.warehouseId(), line,
          (a, b) -> new ReservationLine(a.productId(), a.warehouseId(), a.quantity() + b.quantity()));
    }
    return java.util.List.copyOf(byStock.values());
  }
}
