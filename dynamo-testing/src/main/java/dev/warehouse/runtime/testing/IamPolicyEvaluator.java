package dev.warehouse.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.warehouse.contracttools.IamPolicy;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.dynamo.SingleTable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ComparisonOperator;
import software.amazon.awssdk.services.dynamodb.model.Condition;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Decides whether an IAM identity policy allows DynamoDB requests: a test oracle for the documents
 * under {@code deploy/aws/iam/}, covering the subset of IAM's policy language they use, not IAM.
 *
 * <p>What it evaluates:
 * <ul>
 *   <li>Statements with {@code "Effect": "Allow"}. A check no statement allows is denied (IAM's implicit
 *       deny); a request is allowed only when every check it makes is.
 *   <li>{@code Action}, a string or a list, matched without regard to case, {@code *} and {@code ?} as
 *       wildcards.
 *   <li>{@code Resource}, a string or a list of ARNs, matched with case, {@code *} and {@code ?} as
 *       wildcards. A request on an index is on {@code …:table/T/index/I}, which the table's ARN does not
 *       match.
 *   <li>{@code Condition} with the operators {@code ForAllValues:StringLike} (every value of the
 *       request's key matches one of the patterns, which holds when the request has no value at all, as
 *       in IAM), {@code ForAnyValue:StringEquals} (some value equals one; not when there is none) and
 *       {@code Null}. Every operator of a block, and every key of an operator, must hold; the values of
 *       one key are alternatives. Key names ignore case, values do not.
 * </ul>
 *
 * <p>It refuses documents that use anything else ({@code Deny}, {@code NotAction}, {@code NotResource},
 * {@code Principal}, other operators or {@code …IfExists}, policy variables or an unfilled
 * placeholder), rather than misread them. It does not model the rest of a real decision: resource-based
 * policies, permission boundaries, organization and session policies, or the condition keys it does
 * not set ({@code dynamodb:Attributes}, {@code dynamodb:Select}, {@code dynamodb:ReturnValues} …).
 *
 * <p>A request becomes the checks DynamoDB makes for it ({@link #checks}): GetItem, Query, Scan,
 * PutItem, UpdateItem, DeleteItem one each, on the table's ARN, or the index's for a Query or Scan of
 * one; each item of a TransactWriteItems as its own PutItem, UpdateItem, DeleteItem or
 * ConditionCheckItem on its own key, with {@code dynamodb:EnclosingOperation} set (there is no
 * permission for the transaction as a whole), and each Get of a TransactGetItems as a GetItem; a
 * BatchGetItem or BatchWriteItem as one check of its own action per table, with every key of that
 * table. {@code dynamodb:LeadingKeys} is the partition-key value each names: an item's {@code PK}, or
 * the equality on the partition key of what a Query reads ({@code PK}, or {@code GSI1PK} on GSI1); a
 * Scan, or a Query on an index whose partition key this table does not have, names none.
 */
public final class IamPolicyEvaluator {

  /** The account the tests' documents are filled with. */
  public static final String TEST_ACCOUNT = "123456789012";

  /** One authorization DynamoDB makes for a request: an action, on a resource, in a request context. */
  public record Check(String action, String resource, Map<String, List<String>> context) {

    public Check {
      context = Map.copyOf(context);
    }

    @Override
    public String toString() {
      return action + " on " + resource + (context.isEmpty() ? "" : " with " + new java.util.TreeMap<>(context));
    }
  }

  private record Statement(String sid, List<String> actions, List<String> resources, List<Clause> conditions) {

    /** What the statement grants: one grant per leading-key pattern it allows, or one for it all. */
    List<Grant> grants() {
      List<Grant> grants = conditions.stream().filter(Clause::limitsLeadingKeys)
          .flatMap(c -> c.values().stream().map(p -> new Grant(sid, p))).toList();
      return grants.isEmpty() ? List.of(new Grant(sid, null)) : grants;
    }
  }

  /** A statement's allowance of one leading-key pattern (null for a statement without one). */
  private record Grant(String sid, String leadingKeys) {

    boolean usedBy(Check check) {
      return leadingKeys == null || check.context().getOrDefault(LEADING_KEYS, List.of()).stream()
          .anyMatch(key -> wildcard(leadingKeys, false).matcher(key).matches());
    }

    @Override
    public String toString() {
      return leadingKeys == null ? sid : sid + " on " + leadingKeys;
    }
  }

  private record Clause(String operator, String key, List<String> values) {

    boolean limitsLeadingKeys() {
      return operator.equals("ForAllValues:StringLike") && key.equalsIgnoreCase(LEADING_KEYS);
    }
  }

  private static final Set<String> OPERATORS = Set.of("ForAllValues:StringLike", "ForAnyValue:StringEquals", "Null");
  private static final Set<String> STATEMENT_ELEMENTS = Set.of("Sid", "Effect", "Action", "Resource", "Condition");
  private static final String LEADING_KEYS = "dynamodb:LeadingKeys";
  private static final String ENCLOSING_OPERATION = "dynamodb:EnclosingOperation";
  private static final Pattern EQUALITY = Pattern.compile("([#A-Za-z0-9_.\\-]+)\\s*=\\s*(:[A-Za-z0-9_]+)");

  private final List<Statement> statements;
  private final String region;
  private final String account;
  /** The grants ({@link Statement#grants}) some allowed check has used. */
  private final Set<Grant> used = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private IamPolicyEvaluator(List<Statement> statements, String region, String account) {
    this.statements = statements;
    this.region = region;
    this.account = account;
  }

  /**
   * The checked-in document of {@code deploy/aws/iam/<name>.json}, filled for {@code table} in the tests'
   * region and account.
   */
  public static IamPolicyEvaluator checkedIn(String name, String table) {
    Path file = Path.of(System.getProperty("project.root", "..")).resolve("deploy/aws/iam").resolve(name + ".json");
    try {
      return of(fill(Files.readString(file), StoreServiceConfig.DEFAULT_REGION, TEST_ACCOUNT, table),
          StoreServiceConfig.DEFAULT_REGION, TEST_ACCOUNT);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Fills a generated document's placeholders, as docs/iam.md does with sed. */
  public static String fill(String document, String region, String account, String table) {
    return document.replace(IamPolicy.REGION, region).replace(IamPolicy.ACCOUNT, account).replace(IamPolicy.TABLE, table);
  }

  /**
   * Reads a (filled) policy document.
   *
   * @throws IllegalArgumentException when it uses something this evaluator does not evaluate
   */
  public static IamPolicyEvaluator of(String document, String region, String account) {
    if (document.contains("${")) {
      throw new IllegalArgumentException("unfilled placeholder or policy variable: " + document);
    }
    JsonObject root = JsonParser.parseString(document).getAsJsonObject();
    if (!root.has("Version") || !"2012-10-17".equals(root.get("Version").getAsString())) {
      throw new IllegalArgumentException("Version must be 2012-10-17");
    }
    List<Statement> statements = new ArrayList<>();
    for (JsonElement element : strings(root.get("Statement"), true)) {
      statements.add(statement(element.getAsJsonObject()));
    }
    return new IamPolicyEvaluator(List.copyOf(statements), region, account);
  }

  /** Whether the policy allows {@code check}. */
  public boolean allows(Check check) {
    boolean allowed = false;
    for (Statement s : statements) {
      if (matchesAny(s.actions(), check.action(), true) && matchesAny(s.resources(), check.resource(), false)
          && s.conditions().stream().allMatch(t -> holds(t, check.context()))) {
        allowed = true;
        s.grants().stream().filter(g -> g.usedBy(check)).forEach(used::add);
      }
    }
    return allowed;
  }

  /**
   * Asserts that the checks allowed so far used every grant of the policy: each statement, and each
   * leading-key pattern of one. A grant that no request needs is privilege to take away.
   */
  public void assertEveryGrantUsed() {
    List<Grant> grants = statements.stream().flatMap(s -> s.grants().stream()).toList();
    assertThat(used).as("grants of the IAM policy the requests used").containsExactlyInAnyOrderElementsOf(grants);
  }

  /** Whether the policy allows {@code request}: every check it makes. */
  public boolean allows(SdkRequest request) {
    return denied(request).isEmpty();
  }

  /** The checks of {@code request} the policy denies. */
  public List<Check> denied(SdkRequest request) {
    return checks(request).stream().filter(c -> !allows(c)).toList();
  }

  /** Asserts that the policy allows each of {@code requests}, naming every check it denies. */
  public void assertAllows(List<SdkRequest> requests) {
    assertThat(requests).as("requests to evaluate").isNotEmpty();
    List<String> denied = new ArrayList<>();
    for (SdkRequest request : requests) {
      denied(request).forEach(check -> denied.add(check + " (" + request.getClass().getSimpleName() + ")"));
    }
    assertThat(denied).as("checks the IAM policy denies").isEmpty();
  }

  /** The checks DynamoDB makes for {@code request}, as the class comment lists them. */
  public List<Check> checks(SdkRequest request) {
    if (request instanceof GetItemRequest r) {
      return List.of(check("GetItem", table(r.tableName()), partitionOf(r.key()), null));
    } else if (request instanceof QueryRequest r) {
      return List.of(check("Query", resource(r.tableName(), r.indexName()), queriedPartition(r), null));
    } else if (request instanceof ScanRequest r) {
      return List.of(check("Scan", resource(r.tableName(), r.indexName()), List.of(), null));
    } else if (request instanceof PutItemRequest r) {
      return List.of(check("PutItem", table(r.tableName()), partitionOf(r.item()), null));
    } else if (request instanceof UpdateItemRequest r) {
      return List.of(check("UpdateItem", table(r.tableName()), partitionOf(r.key()), null));
    } else if (request instanceof DeleteItemRequest r) {
      return List.of(check("DeleteItem", table(r.tableName()), partitionOf(r.key()), null));
    } else if (request instanceof TransactWriteItemsRequest r) {
      return r.transactItems().stream().map(this::itemCheck).toList();
    } else if (request instanceof TransactGetItemsRequest r) {
      return r.transactItems().stream()
          .map(i -> check("GetItem", table(i.get().tableName()), partitionOf(i.get().key()), "TransactGetItems"))
          .toList();
    } else if (request instanceof BatchGetItemRequest r) {
      return r.requestItems().entrySet().stream()
          .map(e -> check("BatchGetItem", table(e.getKey()),
              e.getValue().keys().stream().flatMap(k -> partitionOf(k).stream()).distinct().toList(), null))
          .toList();
    } else if (request instanceof BatchWriteItemRequest r) {
      return r.requestItems().entrySet().stream()
          .map(e -> check("BatchWriteItem", table(e.getKey()),
              e.getValue().stream().flatMap(w -> partitionOf(written(w)).stream()).distinct().toList(), null))
          .toList();
    }
    throw new IllegalArgumentException("not modelled: " + request.getClass().getSimpleName());
  }

  private Check itemCheck(TransactWriteItem item) {
    if (item.put() != null) {
      return check("PutItem", table(item.put().tableName()), partitionOf(item.put().item()), "TransactWriteItems");
    } else if (item.update() != null) {
      return check("UpdateItem", table(item.update().tableName()), partitionOf(item.update().key()), "TransactWriteItems");
    } else if (item.delete() != null) {
      return check("DeleteItem", table(item.delete().tableName()), partitionOf(item.delete().key()), "TransactWriteItems");
    }
    return check("ConditionCheckItem", table(item.conditionCheck().tableName()), partitionOf(item.conditionCheck().key()),
        "TransactWriteItems");
  }

  private static Check check(String action, String resource, List<String> leadingKeys, String enclosing) {
    Map<String, List<String>> context = new LinkedHashMap<>();
    if (!leadingKeys.isEmpty()) {
      context.put(LEADING_KEYS, leadingKeys);
    }
    if (enclosing != null) {
      context.put(ENCLOSING_OPERATION, List.of(enclosing));
    }
    return new Check("dynamodb:" + action, resource, context);
  }

  private String table(String nameOrArn) {
    return nameOrArn.startsWith("arn:") ? nameOrArn : "arn:aws:dynamodb:" + region + ":" + account + ":table/" + nameOrArn;
  }

  private String resource(String table, String index) {
    return table(table) + (index == null ? "" : "/index/" + index);
  }

  private static Map<String, AttributeValue> written(WriteRequest write) {
    return write.putRequest() != null ? write.putRequest().item() : write.deleteRequest().key();
  }

  private static List<String> partitionOf(Map<String, AttributeValue> item) {
    AttributeValue pk = item.get(SingleTable.PK);
    return pk == null || pk.s() == null ? List.of() : List.of(pk.s());
  }

  /** The value a Query's key condition sets the partition key of what it reads to, if any. */
  private static List<String> queriedPartition(QueryRequest query) {
    String attribute = query.indexName() == null ? SingleTable.PK
        : SingleTable.GSI1.equals(query.indexName()) ? SingleTable.GSI1_PK : null;
    if (attribute == null) {
      return List.of();
    }
    if (query.keyConditionExpression() != null) {
      Matcher m = EQUALITY.matcher(query.keyConditionExpression());
      while (m.find()) {
        String name = m.group(1).startsWith("#") ? query.expressionAttributeNames().get(m.group(1)) : m.group(1);
        AttributeValue value = query.expressionAttributeValues().get(m.group(2));
        if (attribute.equals(name) && value != null && value.s() != null) {
          return List.of(value.s());
        }
      }
    } else if (query.hasKeyConditions()) {
      Condition legacy = query.keyConditions().get(attribute);
      if (legacy != null && legacy.comparisonOperator() == ComparisonOperator.EQ && legacy.attributeValueList().size() == 1) {
        return List.of(legacy.attributeValueList().get(0).s());
      }
    }
    return List.of();
  }

  private static boolean holds(Clause test, Map<String, List<String>> context) {
    List<String> values = context.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(test.key()))
        .findFirst().map(Map.Entry::getValue).orElse(List.of());
    return switch (test.operator()) {
      case "ForAllValues:StringLike" -> values.stream().allMatch(v -> matchesAny(test.values(), v, false));
      case "ForAnyValue:StringEquals" -> values.stream().anyMatch(test.values()::contains);
      case "Null" -> test.values().stream().anyMatch(v -> Boolean.parseBoolean(v) == values.isEmpty());
      default -> throw new IllegalStateException(test.operator());
    };
  }

  private static boolean matchesAny(List<String> patterns, String value, boolean ignoreCase) {
    return patterns.stream().anyMatch(p -> wildcard(p, ignoreCase).matcher(value).matches());
  }

  private static Pattern wildcard(String pattern, boolean ignoreCase) {
    String regex = pattern.chars().mapToObj(c -> c == '*' ? ".*" : c == '?' ? "." : Pattern.quote(String.valueOf((char) c)))
        .collect(Collectors.joining());
    return Pattern.compile(regex, ignoreCase ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0);
  }

  private static Statement statement(JsonObject s) {
    for (String element : s.keySet()) {
      if (!STATEMENT_ELEMENTS.contains(element)) {
        throw new IllegalArgumentException("statement element not evaluated here: " + element);
      }
    }
    String sid = s.has("Sid") ? s.get("Sid").getAsString() : "";
    if (!s.has("Effect") || !"Allow".equals(s.get("Effect").getAsString())) {
      throw new IllegalArgumentException(sid + ": only Allow statements are evaluated here");
    }
    if (!s.has("Action") || !s.has("Resource")) {
      throw new IllegalArgumentException(sid + ": a statement needs Action and Resource");
    }
    List<Clause> conditions = new ArrayList<>();
    if (s.has("Condition")) {
      JsonObject block = s.getAsJsonObject("Condition");
      for (String operator : block.keySet()) {
        if (!OPERATORS.contains(operator)) {
          throw new IllegalArgumentException(sid + ": condition operator not evaluated here: " + operator);
        }
        JsonObject keys = block.getAsJsonObject(operator);
        for (String key : keys.keySet()) {
          conditions.add(new Clause(operator, key, strings(keys.get(key), false).stream().map(JsonElement::getAsString).toList()));
        }
      }
    }
    return new Statement(sid,
        strings(s.get("Action"), false).stream().map(JsonElement::getAsString).toList(),
        strings(s.get("Resource"), false).stream().map(JsonElement::getAsString).toList(),
        List.copyOf(conditions));
  }

  /** A value or a list of values, as IAM allows either. */
  private static List<JsonElement> strings(JsonElement element, boolean objects) {
    List<JsonElement> values = new ArrayList<>();
    if (element == null) {
      return values;
    }
    if (element.isJsonArray()) {
      element.getAsJsonArray().forEach(values::add);
    } else {
      values.add(element);
    }
    for (JsonElement value : values) {
      if (objects ? !value.isJsonObject() : !value.isJsonPrimitive()) {
        throw new IllegalArgumentException("unexpected " + value);
      }
    }
    return values;
  }

  @Override
  public String toString() {
    return statements.stream().map(Statement::sid).collect(Collectors.joining(", ", "policy[", "]"))
        + " in " + region + "/" + account;
  }
}
