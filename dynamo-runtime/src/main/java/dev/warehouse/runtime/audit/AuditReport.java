package dev.warehouse.runtime.audit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one audit saw.
 *
 * @param counts   what it checked, by name, in the order the summary line prints them (e.g. {@code orders=12})
 * @param findings the problems it found, sorted by subject
 */
public record AuditReport(Map<String, Long> counts, List<Finding> findings) {

  public AuditReport {
    counts = Collections.unmodifiableMap(new LinkedHashMap<>(counts));
    List<Finding> sorted = new ArrayList<>(findings);
    sorted.sort(Finding.ORDER);
    findings = List.copyOf(sorted);
  }

  /** The last line of an audit: {@code audit table=… orders=12 problems=0}. */
  String summary(String table) {
    StringBuilder line = new StringBuilder("audit table=").append(table);
    counts.forEach((name, count) -> line.append(' ').append(name).append('=').append(count));
    return line.append(" problems=").append(findings.size()).toString();
  }

  /** How many findings of each kind. */
  public java.util.Map<String, Integer> byKind() {
    java.util.Map<String, Integer> kinds = new java.util.TreeMap<>();
    findings.forEach(f -> kinds.merge(f.kind(), 1, Integer::sum));
    return kinds;
  }
}
