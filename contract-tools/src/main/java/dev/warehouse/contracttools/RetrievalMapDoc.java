package dev.warehouse.contracttools;

import dev.warehouse.routing.v1.Consistency;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/** Renders the retrieval map as the Markdown table the README carries (and a test keeps in step). */
public final class RetrievalMapDoc {

  private RetrievalMapDoc() {}

  public static String markdown(List<RouteTable> services) {
    StringBuilder md = new StringBuilder()
        .append("| ID | Request | RPC | Operation | Index | PK | SK | Consistency | Expected volume |\n")
        .append("|---|---|---|---|---|---|---|---|---|\n");
    services.stream()
        .flatMap(s -> s.routes().stream())
        .sorted(Comparator.comparing((Route r) -> r.patternId().charAt(0))
            .thenComparing(r -> Integer.parseInt(r.patternId().substring(1))))
        .forEach(r -> md.append("| ").append(r.patternId())
            .append(" | ").append(r.request())
            .append(" | `").append(r.methodName()).append('`')
            .append(" | ").append(r.operations().stream().map(RetrievalMapDoc::operation).collect(Collectors.joining(" + ")))
            .append(r.fanOut().map(f -> " × " + f.shardCount() + " shards, at once").orElse(""))
            .append(" | ").append(r.index().orElse("table"))
            .append(" | `").append(r.partitionKey()).append('`')
            .append(r.fanOut().map(f -> ", `{shard}` = CRC-32 of `" + f.shardOf() + "` mod " + f.shardCount()).orElse(""))
            .append(" | ").append(sortKey(r))
            .append(" | ").append(consistency(r.consistency()))
            .append(" | ").append(r.expectedVolume())
            .append(" |\n"));
    return md.toString();
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
      default -> op.name();
    };
  }

  private static String sortKey(Route r) {
    String forms = r.sortKeyConditions().stream()
        .map(c -> switch (c) {
          case SORT_KEY_CONDITION_BEGINS_WITH -> "begins_with `" + r.sortKey() + "`";
          case SORT_KEY_CONDITION_BETWEEN -> "between `" + r.sortKey() + "…` and `" + r.sortKey() + "…`";
          default -> "`" + r.sortKey() + "`";
        })
        .collect(Collectors.joining(" or "));
    String also = r.alsoWrites().stream()
        .map(k -> "`" + k.partitionKey() + "` / `" + k.sortKey() + "`")
        .collect(Collectors.joining(", "));
    return also.isEmpty() ? forms : forms + "; also writes " + also;
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
