package dev.warehouse.contracttools;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.runtime.routing.KeyTemplate;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The IAM policy documents of the processes that reach the table ({@code deploy/aws/iam/}), generated
 * from what they declare: a service's from the routes of its RPCs, the audits' from the operations
 * their scan sends. {@code IamPolicyDocsTest} fails when the checked-in documents drift from these.
 *
 * <p>A service's document has one statement per action, resource and context, each allowing only
 * what some route declares:
 *
 * <ul>
 *   <li>GetItem, Query, PutItem, UpdateItem and DeleteItem where a route's {@code operations} name them,
 *       on the route's partition key; a Query on the index the route reads, if any (its ARN
 *       {@code …/index/NAME}), else on the table.
 *   <li>The items of a TransactWriteItems each as the route declares it ({@code writes}), on that item's
 *       partition key: DynamoDB authorizes a transaction item by item, a Put as PutItem, an Update as
 *       UpdateItem, a Delete as DeleteItem and a ConditionCheck as ConditionCheckItem; there is no
 *       permission for the transaction as a whole. These statements hold only inside a transaction
 *       ({@code dynamodb:EnclosingOperation}): what the routes write only in transactions cannot be
 *       written by a plain PutItem, UpdateItem or DeleteItem.
 *   <li>Every statement limits {@code dynamodb:LeadingKeys}, the partition key the request names (for a
 *       Query on an index, the index's), with {@code ForAllValues:StringLike} to the routes' partition-key
 *       templates, each variable as {@code *} ({@code PRODUCT#{product_id}} becomes {@code PRODUCT#*}).
 *       {@code ForAllValues} also holds for a request that names no partition key at all, so each
 *       statement requires one ({@code Null}: false).
 * </ul>
 *
 * <p>The audits' document allows their reads of the base table (a Scan among them, which no service
 * may send) and no write. A Scan names no partition key, so no leading-key condition could limit it.
 *
 * <p>Resources are written with CloudFormation {@code Fn::Sub} placeholders, {@value #REGION},
 * {@value #ACCOUNT} and {@value #TABLE}; docs/iam.md says how to fill them elsewhere.
 */
public final class IamPolicy {

  public static final String REGION = "${AWS::Region}";
  public static final String ACCOUNT = "${AWS::AccountId}";
  public static final String TABLE = "${TableName}";
  /** The name of the audits' document ({@code audit.json}), beside one per service. */
  public static final String AUDIT = "audit";

  static final String VERSION = "2012-10-17";
  static final String LEADING_KEYS = "dynamodb:LeadingKeys";
  static final String ENCLOSING_OPERATION = "dynamodb:EnclosingOperation";

  /** The order statements are listed in, reads first. */
  private static final List<String> ACTIONS = List.of(
      "GetItem", "BatchGetItem", "Query", "Scan", "PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem");
  private static final Set<String> READS = Set.of("GetItem", "BatchGetItem", "Query", "Scan");

  private static final Gson JSON = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create();

  private IamPolicy() {}

  /**
   * The documents to check in under {@code deploy/aws/iam/}, by file name: {@code <service>.json} for
   * each service's routes, and {@code audit.json} for the audits' operations.
   */
  public static SortedMap<String, String> documents(Map<String, RouteTable> routesByService, List<String> auditOperations) {
    SortedMap<String, String> documents = new TreeMap<>();
    routesByService.forEach((service, routes) -> documents.put(service + ".json", forRoutes(routes)));
    documents.put(AUDIT + ".json", forTableReader(auditOperations));
    return documents;
  }

  /** The least-privilege document of a service whose RPCs declare {@code routes}. */
  public static String forRoutes(RouteTable routes) {
    SortedMap<Grant, Grants> grants = new TreeMap<>(Grant.ORDER);
    for (Route route : routes.routes()) {
      Set<Operation> ops = new java.util.LinkedHashSet<>(route.operations());
      ops.addAll(route.splitOperations());
      for (Operation op : ops) {
        if (op == Operation.OPERATION_TRANSACT_GET_ITEMS) {
          // DynamoDB authorizes each Get of a TransactGetItems as a GetItem of its key: the keys the
          // route declares it reads so (a product's stock record and buckets).
          for (Route.ItemKey item : route.alsoReads()) {
            grants.computeIfAbsent(new Grant("GetItem", Optional.empty(), false), g -> new Grants())
                .add(item.partitionKey(), route);
          }
        } else if (op == Operation.OPERATION_TRANSACT_WRITE_ITEMS) {
          List<Route.ItemKey> items = new ArrayList<>(List.of(route.mainKey()));
          items.addAll(route.alsoWrites());
          for (Route.ItemKey item : items) {
            for (Operation write : item.writes()) {
              grants.computeIfAbsent(new Grant(action(write), Optional.empty(), true), g -> new Grants())
                  .add(item.partitionKey(), route);
            }
          }
        } else if (op == Operation.OPERATION_BATCH_GET_ITEM) {
          // A batch read reads the records the route then updates in its transaction (an order's
          // stock records): their partition keys, not the route's own.
          for (Route.ItemKey item : route.alsoWrites()) {
            if (item.writes().contains(Operation.OPERATION_UPDATE_ITEM)) {
              grants.computeIfAbsent(new Grant("BatchGetItem", Optional.empty(), false), g -> new Grants())
                  .add(item.partitionKey(), route);
            }
          }
        } else {
          Optional<String> index = op == Operation.OPERATION_QUERY ? route.index() : Optional.empty();
          grants.computeIfAbsent(new Grant(action(op), index, false), g -> new Grants())
              .add(route.partitionKey(), route);
        }
      }
    }
    JsonArray statements = new JsonArray();
    grants.forEach((grant, to) -> statements.add(statement(grant, to)));
    return document(statements);
  }

  /**
   * A read-only document for a process that reads the whole base table with {@code operations} (the
   * audits: Scan, BatchGetItem, GetItem), without a leading-key condition: a Scan names no partition key.
   *
   * @throws IllegalArgumentException for an operation that is not a read
   */
  public static String forTableReader(Collection<String> operations) {
    JsonArray actions = new JsonArray();
    ACTIONS.stream().filter(operations::contains).forEach(a -> actions.add("dynamodb:" + a));
    List<String> others = operations.stream().filter(op -> !READS.contains(op)).toList();
    if (!others.isEmpty() || actions.isEmpty()) {
      throw new IllegalArgumentException("a table reader reads (one or more of " + READS + "), not " + operations);
    }
    JsonObject statement = new JsonObject();
    statement.addProperty("Sid", "ReadTheWholeTable");
    statement.addProperty("Effect", "Allow");
    statement.add("Action", actions);
    statement.addProperty("Resource", arn(Optional.empty()));
    JsonArray statements = new JsonArray();
    statements.add(statement);
    return document(statements);
  }

  /** The ARN of the table, or of one of its indexes. */
  static String arn(Optional<String> index) {
    return "arn:aws:dynamodb:" + REGION + ":" + ACCOUNT + ":table/" + TABLE + index.map(i -> "/index/" + i).orElse("");
  }

  /** The IAM action (without its {@code dynamodb:} prefix) that DynamoDB authorizes {@code op} as. */
  static String action(Operation op) {
    return switch (op) {
      case OPERATION_GET_ITEM -> "GetItem";
      case OPERATION_QUERY -> "Query";
      case OPERATION_PUT_ITEM -> "PutItem";
      case OPERATION_UPDATE_ITEM -> "UpdateItem";
      case OPERATION_DELETE_ITEM -> "DeleteItem";
      case OPERATION_CONDITION_CHECK_ITEM -> "ConditionCheckItem";
      default -> throw new IllegalArgumentException(op + " is authorized item by item, not as one action");
    };
  }

  /**
   * The leading-key pattern of a partition-key template: its variables as {@code *}. The literal text
   * must hold neither {@code *} nor {@code ?}, which {@code StringLike} would read as wildcards.
   */
  static String leadingKey(KeyTemplate partitionKey) {
    if (partitionKey.toString().contains("*") || partitionKey.toString().contains("?")) {
      throw new IllegalArgumentException("partition key " + partitionKey + " holds an IAM wildcard character");
    }
    return partitionKey.render(partitionKey.variables().stream().map(v -> "*").toArray(String[]::new));
  }

  private static JsonObject statement(Grant grant, Grants to) {
    JsonObject statement = new JsonObject();
    statement.addProperty("Sid", grant.action()
        + (grant.inTransaction() ? "InTransaction" : "")
        + grant.index().map(i -> "On" + i.replaceAll("[^A-Za-z0-9]", "")).orElse("")
        + "For" + String.join("", to.patternIds));
    statement.addProperty("Effect", "Allow");
    statement.addProperty("Action", "dynamodb:" + grant.action());
    statement.addProperty("Resource", arn(grant.index()));
    JsonObject condition = new JsonObject();
    condition.add("ForAllValues:StringLike", single(LEADING_KEYS, array(to.leadingKeys)));
    JsonObject present = new JsonObject();
    present.addProperty(LEADING_KEYS, "false");
    condition.add("Null", present);
    if (grant.inTransaction()) {
      condition.add("ForAnyValue:StringEquals", single(ENCLOSING_OPERATION, array(List.of("TransactWriteItems"))));
    }
    statement.add("Condition", condition);
    return statement;
  }

  private static String document(JsonArray statements) {
    JsonObject document = new JsonObject();
    document.addProperty("Version", VERSION);
    document.add("Statement", statements);
    return JSON.toJson(document) + "\n";
  }

  private static JsonObject single(String key, JsonArray values) {
    JsonObject object = new JsonObject();
    object.add(key, values);
    return object;
  }

  private static JsonArray array(Collection<String> values) {
    JsonArray array = new JsonArray();
    values.forEach(array::add);
    return array;
  }

  /** What one statement allows: an action, on the table or an index, inside transactions only or anywhere. */
  private record Grant(String action, Optional<String> index, boolean inTransaction) {
    static final Comparator<Grant> ORDER = Comparator
        .comparing((Grant g) -> g.index().orElse(""))
        .thenComparing(g -> ACTIONS.indexOf(g.action()))
        .thenComparing(Grant::inTransaction);
  }

  /** The partition keys a statement allows, and the routes that need them. */
  private static final class Grants {
    final SortedSet<String> leadingKeys = new TreeSet<>();
    final SortedSet<String> patternIds = new TreeSet<>(
        Comparator.comparing((String id) -> id.charAt(0)).thenComparing(id -> Integer.parseInt(id.substring(1))));

    void add(KeyTemplate partitionKey, Route route) {
      leadingKeys.add(leadingKey(partitionKey));
      patternIds.add(route.patternId());
    }
  }
}
