package dev.warehouse.order.domain;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The rules of an order's lines: merged by product and warehouse, at most {@value #MAX_LINES}, one
 * currency, and the total their sum.
 */
public final class OrderLines {

  /**
   * The most lines an order may have, after merging. Not the item size (33 lines take about 7 KB of the
   * order's 400 KB item) but DynamoDB's limit of 100 items per transaction: the inventory-service holds an
   * order's stock in one TransactWriteItems, where each line may update its stock record and move its
   * low-stock marker (a delete and a put), besides the reservation itself: 1 + 3 × 33 = 100.
   */
  public static final int MAX_LINES = 33;

  /** Most units of one line. */
  public static final long MAX_QUANTITY = 1_000_000_000L;

  private static final Comparator<OrderLine> ORDER =
      Comparator.comparing(OrderLine::productId).thenComparing(OrderLine::warehouseId);

  private OrderLines() {}

  /**
   * Lines of the same product and warehouse as one line, their quantities added, in product then
   * warehouse order. Returns, for each line whose unit price disagrees with an earlier one of the same
   * stock, its index, through {@code conflicts}.
   */
  public static List<OrderLine> merge(List<OrderLine> lines, List<Integer> conflicts) {
    List<OrderLine> merged = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      OrderLine line = lines.get(i);
      Optional<OrderLine> earlier = merged.stream().filter(line::sameStock).findFirst();
      if (earlier.isEmpty()) {
        merged.add(line);
      } else if (!earlier.get().unitPrice().sameAs(line.unitPrice())) {
        conflicts.add(i);
      } else {
        merged.set(merged.indexOf(earlier.get()), new OrderLine(line.productId(), line.warehouseId(),
            earlier.get().quantity() + line.quantity(), earlier.get().unitPrice()));
      }
    }
    merged.sort(ORDER);
    return List.copyOf(merged);
  }

  /**
   * The sum of the lines' amounts, in their one currency.
   *
   * @throws ArithmeticException when it does not fit google.type.Money's 64-bit units
   */
  public static Money total(List<OrderLine> lines) {
    Money total = Money.zero(lines.get(0).unitPrice().currencyCode());
    for (OrderLine line : lines) {
      total = total.plus(line.amount());
    }
    return total;
  }
}
