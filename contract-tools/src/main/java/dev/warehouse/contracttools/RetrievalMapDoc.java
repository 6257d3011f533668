package dev.warehouse.contracttools;

import dev.warehouse.routing.v1.Consistency;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Renders the retrieval map as the Markdown table the README carries (and a test keeps in step). */
public final class RetrievalMapDoc {

  /** Marks an operation sent only for stock split over buckets; a line under the table says so. */
  static final String SPLIT_MARK = "¹";
  /** Keys other rows also write or read, this many times or more, are named once under the table. */
  static final int SHARED_KEY_ROWS = 3;

  private RetrievalMapDoc() {}

  public static String markdown(List<RouteTable> services) {
    List<Route> routes = services.stream()
        .flatMap(s -> s.routes().stream())
        .sorted(Comparator.comparing((Route r) -> r.patternId().charAt(0))
            .thenComparing(r -> Integer.parseInt(r.patternId().substring(1))))
        .toList();
    // Long keys that many rows write besides their own (a stock record, its buckets, its marker) get a
    // mark, in order of first use, so each row stays readable and the table short.
    Map<String, Long> uses = routes.stream().flatMap(r -> otherKeys(r).stream()).map(RetrievalMapDoc::key)
        .collect(Collectors.groupingBy(k -> k, Collectors.counting()));
    Map<String, String> marks = new LinkedHashMap<>();
    routes.stream().flatMap(r -> otherKeys(r).stream()).map(RetrievalMapDoc::key)
        .filter(k -> uses.get(k) >= SHARED_KEY_ROWS)
        .forEach(k -> marks.computeIfAbsent(k, x -> "(k" + (marks.size() + 1) + ")"));
    StringBuilder md = new StringBuilder()
        .append("| ID | Request | RPC | Operation | Index | PK | SK | Consistency | Expected volume |\n")
        .append("|---|---|---|---|---|---|---|---|---|\n");
    routes.forEach(r -> md.append("| ").append(r.patternId())
        .append(" | ").append(r.request())
        .append(" | `").append(r.methodName()).append('`')
        .append(" | ").append(r.operations().stream().map(RetrievalMapDoc::operation).collect(Collectors.joining(" + ")))
        .append(r.splitOperations().stream().map(op -> " + " + operation(op) + SPLIT_MARK).collect(Collectors.joining()))
        .append(r.fanOut().map(f -> " × " + f.shardCount() + " shards, at once").orElse(""))
        .append(" | ").append(r.index().orElse("table"))
        .append(" | `").append(r.partitionKey()).append('`')
        .append(r.fanOut().map(f -> ", `{shard}` = CRC-32 of `" + f.shardOf() + "` mod " + f.shardCount()).orElse(""))
        .append(" | ").append(sortKey(r, marks))
        .append(" | ").append(consistency(r.consistency()))
        .append(" | ").append(r.expectedVolume())
        .append(" |\n"));
    if (!marks.isEmpty() || routes.stream().anyMatch(r -> !r.splitOperations().isEmpty())) {
      md.append('\n');
    }
    marks.forEach((key, mark) -> md.append(mark).append(": ").append(key).append(" · "));
    if (routes.stream().anyMatch(r -> !r.splitOperations().isEmpty())) {
      md.append(SPLIT_MARK).append(" only for stock split over buckets (W10).");
    }
    if (!marks.isEmpty() || routes.stream().anyMatch(r -> !r.splitOperations().isEmpty())) {
      md.append('\n');
    }
    return md.toString();
  }

  /** The keys a row names besides its own: those it also writes, then those it also reads and does not write. */
  private static List<Route.ItemKey> otherKeys(Route r) {
    List<Route.ItemKey> keys = new java.util.ArrayList<>(r.alsoWrites());
    r.alsoReads().stream()
        .filter(k -> !sameKey(k, r.mainKey()) && r.alsoWrites().stream().noneMatch(w -> sameKey(w, k)))
        .forEach(keys::add);
    return keys;
  }

  private static String key(Route.ItemKey k) {
    return "`" + k.partitionKey() + "` / `" + k.sortKey() + "`";
  }

  private static String operation(Operation op) {
    return switch (op) {
      case OPERATION_GET_ITEM -> "GetItem";
      case OPERATION_BATCH_GET_ITEM -> "BatchGetItem";
      case OPERATION_QUERY -> "Query";
      case OPERATION_PUT_ITEM -> "PutItem";
      case OPERATION_UPDATE_ITEM -> "UpdateItem";
      case OPERATION_TRANSACT_WRITE_ITEMS -> "TransactWriteItems";
      case OPERATION_DELETE_ITEM -> "DeleteItem";
      case OPERATION_TRANSACT_GET_ITEMS -> "TransactGetItems";
      default -> op.name();
    };
  }

  private static String sortKey(Route r, Map<String, String> marks) {
    String forms = r.sortKeyConditions().stream()
        .map(c -> switch (c) {
          case SORT_KEY_CONDITION_BEGINS_WITH -> "begins_with `" + r.sortKey() + "`";
          case SORT_KEY_CONDITION_BETWEEN -> "between `" + r.sortKey() + "…` and `" + r.sortKey() + "…`";
          default -> "`" + r.sortKey() + "`";
        })
        .collect(Collectors.joining(" or "));
    String also = r.alsoWrites().stream().map(RetrievalMapDoc::key).map(k -> marks.getOrDefault(k, k))
        .collect(Collectors.joining(", "));
    String reads = otherKeys(r).stream().filter(k -> !r.alsoWrites().contains(k)).map(RetrievalMapDoc::key)
        .map(k -> marks.getOrDefault(k, k)).collect(Collectors.joining(", "));
    String written = also.isEmpty() ? forms : forms + "; also writes " + also;
    return reads.isEmpty() ? written : written + "; also reads " + reads;
  }

  private static boolean sameKey(Route.ItemKey a, Route.ItemKey b) {
    return a.partitionKey().toString().equals(b.partitionKey().toString()) && a.sortKey().toString().equals(b.sortKey().toString());
  }

  private static String consistency(Consistency c) {
    return switch (c) {
      case CONSISTENCY_STRONG_ALLOWED -> "eventual; strong on request";
      case CONSISTENCY_EVENTUAL_ONLY -> "eventual only";
      case CONSISTENCY_WRITE -> "write";
      default -> c.name();
    };
  }
}
