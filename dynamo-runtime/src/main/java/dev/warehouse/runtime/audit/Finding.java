package dev.warehouse.runtime.audit;

import java.util.Comparator;

/**
 * One problem an audit found, printed as one line: {@code KIND subject detail}, e.g.
 * {@code MISSING_DIRECT_COPY order_id=O1 customer_id=C1}.
 *
 * @param kind    what is wrong, UPPER_SNAKE_CASE
 * @param subject what it is wrong with, as {@code name=value} pairs (findings are sorted by it)
 * @param detail  what was seen, as {@code name=value} pairs; may be empty
 */
public record Finding(String kind, String subject, String detail) {

  /** Findings of one subject together, then by kind. */
  static final Comparator<Finding> ORDER = Comparator.comparing(Finding::subject).thenComparing(Finding::kind);

  @Override
  public String toString() {
    return kind + " " + subject + (detail.isEmpty() ? "" : " " + detail);
  }
}
