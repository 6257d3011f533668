package dev.warehouse.deployment;

import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableSetup;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.AbstractConstruct;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;

/**
 * deploy/aws/warehouse-table.yaml declares the table {@link TableSetup} creates (keys, attribute types,
 * indexes with their projections, TTL attribute, billing mode by default), every index a route reads,
 * backups, deletion protection, encryption, Contributor Insights and auto scaling on every replica,
 * alarms on the operations the processes send, and roles whose policies are deploy/aws/iam/*.json
 * verbatim. Run with {@code -Dcfn.regenerate=true}, it rewrites the template's policy blocks from
 * those files.
 */
@org.junit.jupiter.api.Tag("deployment")
class CloudFormationTemplateTest {

  static final Path ROOT = Repo.ROOT;
  static final Path TEMPLATE = ROOT.resolve("deploy/aws/warehouse-table.yaml");
  static final Path IAM = ROOT.resolve("deploy/aws/iam");
  static final String REGENERATE = "./mvnw -B -o -q -pl deployment-checks -am test -Dtest=CloudFormationTemplateTest "
      + "-Dsurefire.failIfNoSpecifiedTests=false -Dcfn.regenerate=true";
  private static final String PROVISIONED = "Provisioned";
  private static final Set<String> PSEUDO_PARAMETERS = Set.of("AWS::Region", "AWS::AccountId", "AWS::Partition", "AWS::StackName");

  static Map<String, Object> template;
  static Map<String, Object> table;
  static final CreateTableRequest EXPECTED = TableSetup.definition("warehouse");

  @BeforeAll
  static void read() throws IOException {
    if (Boolean.getBoolean("cfn.regenerate")) {
      Files.writeString(TEMPLATE, withPolicyBlocksFromFiles(Files.readString(TEMPLATE)));
    }
    template = load(Files.readString(TEMPLATE));
    Map<String, Object> resource = map(resources().get("Table"));
    assertThat(resource.get("Type")).isEqualTo("AWS::DynamoDB::GlobalTable");
    table = map(resource.get("Properties"));
  }

  // ---- the table's shape: the same as TableSetup's

  @Test
  void keysAndAttributeTypes_areTableSetups() {
    assertThat(pairs(list(table.get("KeySchema")), "AttributeName", "KeyType"))
        .isEqualTo(keySchema(EXPECTED.keySchema()));
    Map<String, String> expected = new TreeMap<>();
    EXPECTED.attributeDefinitions().forEach(a -> expected.put(a.attributeName(), a.attributeTypeAsString()));
    assertThat(new TreeMap<>(pairs(list(table.get("AttributeDefinitions")), "AttributeName", "AttributeType")))
        .isEqualTo(expected);
  }

  @Test
  void indexes_haveTableSetupsKeysAndProjections() {
    Map<String, Object> declared = new TreeMap<>();
    for (Object gsi : list(table.get("GlobalSecondaryIndexes"))) {
      Map<String, Object> index = map(gsi);
      Map<String, Object> projection = map(index.get("Projection"));
      declared.put((String) index.get("IndexName"), List.of(pairs(list(index.get("KeySchema")), "AttributeName", "KeyType"),
          projection.get("ProjectionType"), new TreeSet<>(listOrEmpty(projection.get("NonKeyAttributes")))));
    }
    Map<String, Object> expected = new TreeMap<>();
    for (GlobalSecondaryIndex index : EXPECTED.globalSecondaryIndexes()) {
      expected.put(index.indexName(), List.of(keySchema(index.keySchema()), index.projection().projectionTypeAsString(),
          new TreeSet<>(index.projection().nonKeyAttributes())));
    }
    assertThat(declared).isEqualTo(expected);
    assertThat(table).doesNotContainKey("LocalSecondaryIndexes");
    assertThat(EXPECTED.localSecondaryIndexes()).isEmpty();
  }

  @Test
  void everyIndexARouteReads_isDeclared() {
    Set<String> read = Stream.of(
            RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")),
            RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService")))
        .flatMap(routes -> routes.routes().stream())
        .map(Route::index).flatMap(java.util.Optional::stream)
        .collect(Collectors.toSet());
    assertThat(read).as("indexes the routes read").isNotEmpty();
    assertThat(list(table.get("GlobalSecondaryIndexes")).stream().map(i -> map(i).get("IndexName")).toList())
        .containsAll(read);
  }

  @Test
  void timeToLive_isOnTheAttributeTheRequestRecordsExpireBy() {
    var ttl = TableSetup.timeToLive();
    assertThat(map(table.get("TimeToLiveSpecification")))
        .containsEntry("AttributeName", ttl.attributeName()).containsEntry("Enabled", ttl.enabled());
    assertThat(ttl.attributeName()).isEqualTo(SingleTable.EXPIRE_AT);
  }

  @Test
  void billing_isOnDemandByDefault_likeTableSetup() {
    assertThat(table.get("BillingMode")).isEqualTo(Map.of("Ref", "BillingMode"));
    assertThat(map(parameters().get("BillingMode")).get("Default")).isEqualTo(EXPECTED.billingModeAsString());
    assertThat(table.get("TableName")).isEqualTo(Map.of("Ref", "TableName"));
  }

  // ---- what TableSetup does not make: protection, encryption, insight, capacity

  @Test
  void theTable_isKeptWhenTheStackGoes_andEncryptedWithKms() {
    Map<String, Object> resource = map(resources().get("Table"));
    assertThat(resource).containsEntry("DeletionPolicy", "Retain").containsEntry("UpdateReplacePolicy", "Retain");
    assertThat(map(table.get("SSESpecification"))).containsEntry("SSEEnabled", true).containsEntry("SSEType", "KMS");
  }

  @Test
  void everyReplica_hasBackupsDeletionProtectionInsightOnTableAndIndexes_andTags() {
    List<Map<String, Object>> replicas = replicas();
    assertThat(replicas).hasSize(3);
    assertThat(replicas.get(0).get("Region")).isEqualTo(Map.of("Ref", "AWS::Region"));
    assertThat(replicas.stream().map(r -> r.get("Region")).toList())
        .contains(Map.of("Ref", "ReplicaRegion1"), Map.of("Ref", "ReplicaRegion2"));
    for (Map<String, Object> replica : replicas) {
      Object region = replica.get("Region");
      assertThat(map(replica.get("PointInTimeRecoverySpecification"))).as("PITR in %s", region)
          .containsEntry("PointInTimeRecoveryEnabled", true);
      assertThat(replica).as("deletion protection in %s", region).containsEntry("DeletionProtectionEnabled", true);
      assertThat(map(replica.get("ContributorInsightsSpecification"))).as("insight in %s", region)
          .containsEntry("Enabled", true);
      Map<String, Object> indexes = new TreeMap<>();
      list(replica.get("GlobalSecondaryIndexes")).forEach(i -> indexes.put((String) map(i).get("IndexName"), i));
      assertThat(indexes.keySet()).as("indexes in %s", region)
          .isEqualTo(EXPECTED.globalSecondaryIndexes().stream().map(GlobalSecondaryIndex::indexName).collect(Collectors.toSet()));
      indexes.forEach((name, index) -> {
        assertThat(map(map(index).get("ContributorInsightsSpecification"))).as("%s insight in %s", name, region)
            .containsEntry("Enabled", true);
        assertAutoScaled(map(index).get("ReadProvisionedThroughputSettings"), "ReadCapacityAutoScalingSettings", "ReadCapacity");
      });
      assertAutoScaled(replica.get("ReadProvisionedThroughputSettings"), "ReadCapacityAutoScalingSettings", "ReadCapacity");
      assertThat(pairs(list(replica.get("Tags")), "Key", "Value")).containsKeys("application", "environment");
    }
  }

  @Test
  void provisionedMode_autoScalesWritesOfTheTableAndEveryIndex() {
    assertThat(map(template.get("Conditions")).get(PROVISIONED))
        .isEqualTo(Map.of("Fn::Equals", List.of(Map.of("Ref", "BillingMode"), "PROVISIONED")));
    assertAutoScaled(table.get("WriteProvisionedThroughputSettings"), "WriteCapacityAutoScalingSettings", "WriteCapacity");
    for (Object index : list(table.get("GlobalSecondaryIndexes"))) {
      assertAutoScaled(map(index).get("WriteProvisionedThroughputSettings"), "WriteCapacityAutoScalingSettings", "WriteCapacity");
    }
  }

  /** Present only when provisioned: {@code !If [Provisioned, {<key>: {Min, Max, target}}, !Ref AWS::NoValue]}. */
  private static void assertAutoScaled(Object settings, String key, String parameterPrefix) {
    List<Object> branches = list(map(settings).get("Fn::If"));
    assertThat(branches).hasSize(3);
    assertThat(branches.get(0)).isEqualTo(PROVISIONED);
    assertThat(branches.get(2)).isEqualTo(Map.of("Ref", "AWS::NoValue"));
    Map<String, Object> scaling = map(map(branches.get(1)).get(key));
    assertThat(scaling).containsEntry("MinCapacity", Map.of("Ref", parameterPrefix + "Min"))
        .containsEntry("MaxCapacity", Map.of("Ref", parameterPrefix + "Max"));
    assertThat(map(scaling.get("TargetTrackingScalingPolicyConfiguration")))
        .containsEntry("TargetValue", Map.of("Ref", "TargetUtilizationPercent"));
  }

  // ---- alarms

  @Test
  void throttlingAndSystemErrorAlarms_sumEveryOperationTheProcessesSend() throws IOException {
    Set<String> sent = operationsThePoliciesAllow();
    assertThat(sent).contains("GetItem", "Query", "TransactWriteItems", "Scan");
    for (String metric : List.of("ThrottledRequests", "SystemErrors")) {
      Map<String, Object> alarm = alarmWithMetric(metric);
      List<Map<String, Object>> metrics = list(alarm.get("Metrics")).stream().map(CloudFormationTemplateTest::map).toList();
      Set<String> operations = new TreeSet<>();
      for (Map<String, Object> query : metrics) {
        if (query.containsKey("Expression")) {
          assertThat(query).containsEntry("Expression", "SUM(FILL(METRICS(), 0))").containsEntry("ReturnData", true);
          continue;
        }
        Map<String, Object> stat = map(query.get("MetricStat"));
        Map<String, Object> m = map(stat.get("Metric"));
        assertThat(m).containsEntry("Namespace", "AWS/DynamoDB").containsEntry("MetricName", metric);
        assertThat(stat).containsEntry("Stat", "Sum");
        Map<String, Object> dimensions = pairs(list(m.get("Dimensions")), "Name", "Value");
        assertThat(dimensions).containsEntry("TableName", Map.of("Ref", "Table")).containsOnlyKeys("TableName", "Operation");
        operations.add((String) dimensions.get("Operation"));
      }
      assertThat(operations).as("operations summed by the %s alarm", metric).isEqualTo(sent);
    }
  }

  @Test
  void everyIndex_hasAThrottleAlarm_andTransactionConflictsHaveOne() {
    for (GlobalSecondaryIndex index : EXPECTED.globalSecondaryIndexes()) {
      Set<String> watched = new TreeSet<>();
      for (Map<String, Object> alarm : alarms()) {
        for (Object query : listOrEmpty(alarm.get("Metrics"))) {
          Object stat = map(query).get("MetricStat");
          if (stat == null) {
            continue;
          }
          Map<String, Object> m = map(map(stat).get("Metric"));
          if (index.indexName().equals(pairs(list(m.get("Dimensions")), "Name", "Value").get("GlobalSecondaryIndexName"))) {
            watched.add((String) m.get("MetricName"));
          }
        }
      }
      assertThat(watched).as("throttle metrics alarmed on %s", index.indexName())
          .containsExactlyInAnyOrder("ReadThrottleEvents", "WriteThrottleEvents");
    }
    Map<String, Object> conflicts = alarmWithMetric("TransactionConflict");
    assertThat(conflicts).containsEntry("Namespace", "AWS/DynamoDB")
        .containsEntry("Dimensions", List.of(Map.of("Name", "TableName", "Value", Map.of("Ref", "Table"))));
  }

  /** What the policies allow outside transactions, and TransactWriteItems for what they allow inside one. */
  static Set<String> operationsThePoliciesAllow() throws IOException {
    Set<String> operations = new TreeSet<>();
    for (Map.Entry<String, JsonObject> document : policyFiles().entrySet()) {
      for (JsonElement s : document.getValue().getAsJsonArray("Statement")) {
        JsonObject statement = s.getAsJsonObject();
        JsonObject condition = statement.has("Condition") ? statement.getAsJsonObject("Condition") : new JsonObject();
        if (condition.has("ForAnyValue:StringEquals")
            && condition.getAsJsonObject("ForAnyValue:StringEquals").has("dynamodb:EnclosingOperation")) {
          condition.getAsJsonObject("ForAnyValue:StringEquals").getAsJsonArray("dynamodb:EnclosingOperation")
              .forEach(o -> operations.add(o.getAsString()));
          continue;
        }
        JsonElement action = statement.get("Action");
        List<JsonElement> actions = action.isJsonArray() ? action.getAsJsonArray().asList() : List.of(action);
        actions.forEach(a -> operations.add(a.getAsString().substring("dynamodb:".length())));
      }
    }
    return operations;
  }

  // ---- roles and policies: deploy/aws/iam is the one source

  @Test
  void policies_areTheCheckedInDocuments_oneRoleEach() throws IOException {
    Map<String, JsonObject> files = policyFiles();
    Map<String, String> policyOfFile = new TreeMap<>();
    resources().forEach((name, r) -> {
      Map<String, Object> resource = map(r);
      if (!"AWS::IAM::ManagedPolicy".equals(resource.get("Type"))) {
        return;
      }
      Map<String, Object> properties = map(resource.get("Properties"));
      String file = fileNamedIn((String) properties.get("Description"));
      assertThat(files).as("%s names a document in deploy/aws/iam", name).containsKey(file);
      String document = (String) map(properties.get("PolicyDocument")).get("Fn::Sub");
      assertThat(JsonParser.parseString(document))
          .as("%s differs from deploy/aws/iam/%s; regenerate with:%n%s", name, file, REGENERATE)
          .isEqualTo(files.get(file));
      Matcher placeholder = Pattern.compile("\\$\\{([^}]+)}").matcher(document);
      while (placeholder.find()) {
        assertThat(PSEUDO_PARAMETERS.contains(placeholder.group(1)) || parameters().containsKey(placeholder.group(1)))
            .as("%s's ${%s} is a parameter or a pseudo parameter", name, placeholder.group(1)).isTrue();
      }
      policyOfFile.put(file, name);
    });
    assertThat(policyOfFile.keySet()).as("a managed policy per document in deploy/aws/iam").isEqualTo(files.keySet());
    String text = Files.readString(TEMPLATE);
    assertThat(withPolicyBlocksFromFiles(text)).as("policy blocks are the files verbatim; regenerate with:%n%s", REGENERATE)
        .isEqualTo(text);

    List<Object> attached = new ArrayList<>();
    resources().forEach((name, r) -> {
      Map<String, Object> resource = map(r);
      if ("AWS::IAM::Role".equals(resource.get("Type"))) {
        Map<String, Object> properties = map(resource.get("Properties"));
        assertThat(list(properties.get("ManagedPolicyArns"))).as("%s's policies", name).hasSize(1);
        assertThat(properties).as("%s has no inline policy beside its document", name).doesNotContainKey("Policies");
        attached.addAll(list(properties.get("ManagedPolicyArns")));
      }
    });
    assertThat(attached).as("each document attached to exactly one role")
        .containsExactlyInAnyOrderElementsOf(policyOfFile.values().stream().map(p -> Map.of("Ref", p)).toList());
  }

  @Test
  void regeneration_rewritesOnlyThePolicyBlocks() throws IOException {
    String text = Files.readString(TEMPLATE);
    String stale = text.replace("\"Sid\": \"ReadTheWholeTable\"", "\"Sid\": \"Stale\"");
    assertThat(stale).isNotEqualTo(text);
    assertThat(withPolicyBlocksFromFiles(stale)).isEqualTo(withPolicyBlocksFromFiles(text));
    assertThat(load(withPolicyBlocksFromFiles(stale))).isEqualTo(load(withPolicyBlocksFromFiles(text)));
  }

  @Test
  void theLoader_turnsShortFormTagsIntoTheLongForm() {
    Map<String, Object> loaded = load("a: !Ref X\nb: !If [C, !Sub '${X}', !GetAtt T.Arn]\nc: !Not [!Equals [!Ref X, \"\"]]\n");
    assertThat(loaded).containsEntry("a", Map.of("Ref", "X"))
        .containsEntry("b", Map.of("Fn::If", List.of("C", Map.of("Fn::Sub", "${X}"), Map.of("Fn::GetAtt", "T.Arn"))))
        .containsEntry("c", Map.of("Fn::Not", List.of(Map.of("Fn::Equals", List.of(Map.of("Ref", "X"), "")))));
  }

  // ---- helpers

  static Map<String, JsonObject> policyFiles() throws IOException {
    Map<String, JsonObject> files = new TreeMap<>();
    try (Stream<Path> list = Files.list(IAM)) {
      for (Path file : list.filter(f -> f.toString().endsWith(".json")).toList()) {
        files.put(file.getFileName().toString(), JsonParser.parseString(Files.readString(file)).getAsJsonObject());
      }
    }
    assertThat(files).isNotEmpty();
    return files;
  }

  private static final Pattern FILE_IN_DESCRIPTION = Pattern.compile("\\(deploy/aws/iam/([\\w.-]+\\.json)\\)");

  private static String fileNamedIn(String description) {
    Matcher m = FILE_IN_DESCRIPTION.matcher(description == null ? "" : description);
    assertThat(m.find()).as("a managed policy's Description names its file: (deploy/aws/iam/<name>.json)").isTrue();
    return m.group(1);
  }

  /**
   * The template with each managed policy's {@code PolicyDocument: !Sub |} block replaced by the file its
   * Description names, indented under it.
   */
  static String withPolicyBlocksFromFiles(String text) throws IOException {
    List<String> lines = text.lines().toList();
    List<String> out = new ArrayList<>();
    String file = null;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      out.add(line);
      Matcher m = FILE_IN_DESCRIPTION.matcher(line);
      if (line.trim().startsWith("Description:") && m.find()) {
        file = m.group(1);
      } else if (file != null && line.trim().equals("PolicyDocument: !Sub |")) {
        int indent = line.indexOf('P');
        String pad = " ".repeat(indent + 2);
        while (i + 1 < lines.size() && (lines.get(i + 1).isBlank() || indentOf(lines.get(i + 1)) > indent)) {
          i++;
        }
        while (lines.get(i).isBlank()) {
          i--; // blank lines after the block separate resources; keep them
        }
        for (String json : Files.readString(IAM.resolve(file)).strip().lines().toList()) {
          out.add(json.isEmpty() ? json : pad + json);
        }
        file = null;
      }
    }
    return String.join("\n", out) + "\n";
  }

  private static int indentOf(String line) {
    return line.length() - line.stripLeading().length();
  }

  private static Map<String, Object> resources() {
    return map(template.get("Resources"));
  }

  private static Map<String, Object> parameters() {
    return map(template.get("Parameters"));
  }

  /** The replica specifications, each optional one unwrapped from its {@code !If [cond, spec, NoValue]}. */
  private static List<Map<String, Object>> replicas() {
    List<Map<String, Object>> replicas = new ArrayList<>();
    for (Object r : list(table.get("Replicas"))) {
      Map<String, Object> replica = map(r);
      if (replica.containsKey("Fn::If")) {
        List<Object> branches = list(replica.get("Fn::If"));
        assertThat(branches.get(2)).isEqualTo(Map.of("Ref", "AWS::NoValue"));
        replica = map(branches.get(1));
      }
      replicas.add(replica);
    }
    return replicas;
  }

  private static List<Map<String, Object>> alarms() {
    return resources().values().stream().map(CloudFormationTemplateTest::map)
        .filter(r -> "AWS::CloudWatch::Alarm".equals(r.get("Type")))
        .map(r -> map(r.get("Properties"))).toList();
  }

  /** The one alarm on {@code metric}, directly or among its metric-math inputs. */
  private static Map<String, Object> alarmWithMetric(String metric) {
    List<Map<String, Object>> found = alarms().stream().filter(a -> metric.equals(a.get("MetricName"))
            || listOrEmpty(a.get("Metrics")).stream().map(q -> map(q).get("MetricStat")).filter(s -> s != null)
                .anyMatch(s -> metric.equals(map(map(s).get("Metric")).get("MetricName"))))
        .toList();
    assertThat(found).as("alarms on %s", metric).hasSize(1);
    return found.get(0);
  }

  private static Map<String, Object> keySchema(List<KeySchemaElement> keys) {
    Map<String, Object> schema = new LinkedHashMap<>();
    keys.forEach(k -> schema.put(k.attributeName(), k.keyTypeAsString()));
    return schema;
  }

  /** A list of {key: k, value: v} maps as an ordered map k → v. */
  private static Map<String, Object> pairs(List<Object> entries, String key, String value) {
    Map<String, Object> pairs = new LinkedHashMap<>();
    entries.forEach(e -> pairs.put((String) map(e).get(key), map(e).get(value)));
    return pairs;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    assertThat(o).isInstanceOf(Map.class);
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  static List<Object> list(Object o) {
    assertThat(o).isInstanceOf(List.class);
    return (List<Object>) o;
  }

  private static List<Object> listOrEmpty(Object o) {
    return o == null ? List.of() : list(o);
  }

  /** Parses CloudFormation YAML, turning each short-form tag ({@code !Ref}, {@code !If}, ...) into its long form. */
  static Map<String, Object> load(String yaml) {
    return new Yaml(new CloudFormationConstructor()).load(yaml);
  }

  private static final class CloudFormationConstructor extends SafeConstructor {
    CloudFormationConstructor() {
      super(new LoaderOptions());
      yamlConstructors.put(new Tag("!Ref"), new Intrinsic("Ref"));
      for (String function : List.of("Base64", "Cidr", "Equals", "FindInMap", "GetAtt", "GetAZs", "If", "ImportValue",
          "Join", "Not", "And", "Or", "Select", "Split", "Sub", "Condition")) {
        yamlConstructors.put(new Tag("!" + function),
            new Intrinsic(function.equals("Condition") ? "Condition" : "Fn::" + function));
      }
    }

    private final class Intrinsic extends AbstractConstruct {
      private final String key;

      Intrinsic(String key) {
        this.key = key;
      }

      @Override
      public Object construct(Node node) {
        Object value;
        if (node instanceof ScalarNode scalar) {
          value = constructScalar(scalar);
        } else if (node instanceof SequenceNode sequence) {
          value = constructSequence(sequence);
        } else {
          value = constructMapping((MappingNode) node);
        }
        return Map.of(key, value);
      }
    }
  }
}
