package dev.warehouse.order.grpc;

import dev.warehouse.order.domain.DateFilter;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OrderLines;
import java.util.ArrayList;
import java.util.List;
import dev.warehouse.runtime.error.Violations;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Pattern;

/** Validation of the order contract's dates, money and filters, collecting violations by field. */
final class OrderRequests {

  private static final Pattern DATE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");
  private static final Pattern DATE_PREFIX = Pattern.compile("\\d{4}(-\\d{2}(-\\d{2})?)?");
  private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");
  private static final int MAX_NANOS = 999_999_999;

  private OrderRequests() {}

  /** An optional YYYY-MM-DD date: empty when blank, a violation when malformed or impossible. */
  static Optional<LocalDate> optionalDate(Violations v, String field, String value) {
    if (value.isEmpty()) {
      return Optional.empty();
    }
    if (DATE.matcher(value).matches()) {
      try {
        return Optional.of(LocalDate.parse(value));
      } catch (DateTimeParseException impossible) {
        // falls through to the violation
      }
    }
    v.add(field, "must be a calendar date YYYY-MM-DD");
    return Optional.empty();
  }

  /** A required, non-negative amount of a three-letter currency. */
  static Money money(Violations v, String field, boolean present, com.google.type.Money money) {
    if (!present) {
      v.add(field, "is required");
      return null;
    }
    if (!CURRENCY.matcher(money.getCurrencyCode()).matches()) {
      v.add(field + ".currency_code", "must be a three-letter ISO 4217 code such as EUR");
    }
    if (money.getUnits() < 0 || money.getNanos() < 0) {
      v.add(field, "must not be negative");
    } else if (money.getNanos() > MAX_NANOS) {
      v.add(field + ".nanos", "must be between 0 and " + MAX_NANOS);
    }
    return new Money(money.getCurrencyCode(), money.getUnits(), money.getNanos());
  }

  /**
   * PlaceOrder's lines, merged by product and warehouse: each with its IDs, a quantity of 1 to 10^9 and a
   * unit price, all in one currency, at most {@value OrderLines#MAX_LINES} once merged. Empty when a
   * violation was found.
   */
  static List<OrderLine> lines(Violations v, List<dev.warehouse.order.v1.OrderLine> sent) {
    if (sent.isEmpty()) {
      v.add("lines", "is required: an order buys at least one line");
      return List.of();
    }
    List<OrderLine> lines = new ArrayList<>();
    String currency = null;
    boolean valid = true;
    for (int i = 0; i < sent.size(); i++) {
      dev.warehouse.order.v1.OrderLine line = sent.get(i);
      String at = "lines[" + i + "]";
      int before = v.count();
      String productId = v.id(at + ".product_id", line.getProductId());
      String warehouseId = v.id(at + ".warehouse_id", line.getWarehouseId());
      if (line.getQuantity() < 1 || line.getQuantity() > OrderLines.MAX_QUANTITY) {
        v.add(at + ".quantity", "must be from 1 to " + OrderLines.MAX_QUANTITY);
      }
      Money price = money(v, at + ".unit_price", line.hasUnitPrice(), line.getUnitPrice());
      if (price != null && currency == null) {
        currency = price.currencyCode();
      } else if (price != null && !price.currencyCode().equals(currency)) {
        v.add(at + ".unit_price.currency_code", "must be " + currency + ", the order's one currency (lines[0]'s)");
      }
      valid &= v.count() == before;
      lines.add(new OrderLine(productId, warehouseId, line.getQuantity(), price));
    }
    if (!valid) {
      return List.of();
    }
    List<Integer> conflicts = new ArrayList<>();
    List<OrderLine> merged = OrderLines.merge(lines, conflicts);
    for (int i : conflicts) {
      v.add("lines[" + i + "].unit_price", "must equal the unit price of the earlier line of product "
          + lines.get(i).productId() + " at warehouse " + lines.get(i).warehouseId() + ", with which it is merged");
    }
    if (merged.size() > OrderLines.MAX_LINES) {
      v.add("lines", "must have at most " + OrderLines.MAX_LINES + " lines of distinct product and warehouse, got "
          + merged.size() + ": the inventory holds an order's stock in one DynamoDB transaction, of at most 100 items");
    }
    for (OrderLine line : merged) {
      // Checked after merging too: the inventory holds at most this much of one product at one warehouse per order,
      // and a line it refuses would leave the order PENDING until the recovery gave up on it.
      if (line.quantity() > OrderLines.MAX_QUANTITY) {
        v.add("lines", "must hold at most " + OrderLines.MAX_QUANTITY + " units of product " + line.productId()
            + " at warehouse " + line.warehouseId() + " once its lines are merged, got " + line.quantity());
      }
    }
    return conflicts.isEmpty() ? merged : List.of();
  }

  /** The lines' total; a violation when it exceeds what google.type.Money holds, or when {@code sent} disagrees. */
  static Money total(Violations v, List<OrderLine> lines, boolean totalSent, com.google.type.Money sent) {
    if (lines.isEmpty()) {
      return null;
    }
    Money total;
    try {
      total = OrderLines.total(lines);
    } catch (ArithmeticException tooLarge) {
      v.add("lines", "the order's total is too large for google.type.Money");
      return null;
    }
    if (totalSent) {
      int before = v.count();
      Money expected = money(v, "total", true, sent);
      if (v.count() == before && !expected.sameAs(total)) {
        v.add("total", "must equal the sum of the lines' quantity times unit price, " + total + ", or be left out");
      }
    }
    return total;
  }

  /** A5's filter: a date prefix, or a range, or neither; never both. */
  static DateFilter dateFilter(Violations v, String prefix, String startDate, String endDate) {
    Optional<LocalDate> start = optionalDate(v, "start_date", startDate);
    Optional<LocalDate> end = optionalDate(v, "end_date", endDate);
    if (!prefix.isEmpty()) {
      if (!startDate.isEmpty() || !endDate.isEmpty()) {
        v.add("date_prefix", "must not be combined with start_date or end_date");
      } else if (!validPrefix(prefix)) {
        v.add("date_prefix", "must be a year, year-month or date: 2026, 2026-07 or 2026-07-26");
      }
      return new DateFilter.Prefix(prefix);
    }
    if (start.isPresent() && end.isPresent() && end.get().isBefore(start.get())) {
      v.add("end_date", "must not be before start_date");
    }
    if (startDate.isEmpty() && endDate.isEmpty()) {
      return new DateFilter.All();
    }
    return new DateFilter.Range(start, end);
  }

  private static boolean validPrefix(String prefix) {
    if (!DATE_PREFIX.matcher(prefix).matches()) {
      return false;
    }
    try {
      switch (prefix.length()) {
        case 7 -> YearMonth.parse(prefix);
        case 10 -> LocalDate.parse(prefix);
        default -> { }
      }
      return true;
    } catch (DateTimeParseException impossible) {
      return false;
    }
  }
}
