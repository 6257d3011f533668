package dev.warehouse.order.grpc;

import dev.warehouse.order.domain.DateFilter;
import dev.warehouse.order.domain.Money;
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
