package dev.warehouse.runtime.paging;

import dev.warehouse.runtime.error.Violations;

/** AIP-158 page sizes: 0 means the default, above the maximum is read as the maximum, negative is invalid. */
public final class PageSize {

  public static final int DEFAULT = 25;
  public static final int MAX = 100;

  private PageSize() {}

  /** Resolves a requested page size, recording a violation on {@code page_size} when it is negative. */
  public static int resolve(int requested, Violations violations) {
    if (requested < 0) {
      violations.add("page_size", "must not be negative");
      return DEFAULT;
    }
    if (requested == 0) {
      return DEFAULT;
    }
    return Math.min(requested, MAX);
  }
}
