package dev.warehouse.order.domain;

import java.time.LocalDate;
import java.util.Optional;

/** Which of a customer's orders A5 lists: all, those of a date prefix, or those of an inclusive date range. */
public sealed interface DateFilter {

  /** A canonical text of the filter; page tokens are bound to it. */
  String canonical();

  /** Every order. */
  record All() implements DateFilter {
    @Override
    public String canonical() {
      return "all";
    }
  }

  /** Orders whose date starts with {@code prefix}: "2026", "2026-07" or "2026-07-26". */
  record Prefix(String prefix) implements DateFilter {
    @Override
    public String canonical() {
      return "prefix:" + prefix;
    }
  }

  /** Orders dated from {@code start} to {@code end}, both inclusive; either may be open. */
  record Range(Optional<LocalDate> start, Optional<LocalDate> end) implements DateFilter {
    @Override
    public String canonical() {
      return "range:" + start.map(LocalDate::toString).orElse("") + ".." + end.map(LocalDate::toString).orElse("");
    }
  }
}
