package dev.warehouse.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ComparisonOperator;
import software.amazon.awssdk.services.dynamodb.model.Condition;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/** The evaluator's subset of IAM's semantics, each rule on a small hand-written policy. */
class IamPolicyEvaluatorTest {

  private static final String TABLE_ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/t";

  private static IamPolicyEvaluator policy(String... statements) {
    return IamPolicyEvaluator.of("{\"Version\": \"2012-10-17\", \"Statement\": [" + String.join(",", statements) + "]}",
        "us-east-1", "123456789012");
  }

  private static String allow(String action, String resource, String condition) {
    return "{\"Effect\": \"Allow\", \"Action\": \"" + action + "\", \"Resource\": \"" + resource + "\""
        + (condition == null ? "" : ", \"Condition\": " + condition) + "}";
  }

  private static String leadingKeys(String... patterns) {
    return "{\"ForAllValues:StringLike\": {\"dynamodb:LeadingKeys\": [\"" + String.join("\", \"", patterns) + "\"]}}";
  }

  private static String leadingKeysPresent(String... patterns) {
    return "{\"ForAllValues:StringLike\": {\"dynamodb:LeadingKeys\": [\"" + String.join("\", \"", patterns) + "\"]},"
        + " \"Null\": {\"dynamodb:LeadingKeys\": \"false\"}}";
  }

  private static Map<String, AttributeValue> key(String pk) {
    return Map.of("PK", AttributeValue.fromS(pk), "SK", AttributeValue.fromS("METADATA"));
  }

  private static GetItemRequest get(String pk) {
    return GetItemRequest.builder().tableName("t").key(key(pk)).build();
  }

  private static PutItemRequest put(String pk) {
    return PutItemRequest.builder().tableName("t").item(key(pk)).build();
  }

  private static TransactWriteItem putItem(String pk) {
    return TransactWriteItem.builder().put(p -> p.tableName("t").item(key(pk))).build();
  }

  @Test
  void deniesWhatNoStatementAllows() {
    assertThat(policy().allows(get("A#1"))).isFalse();
    assertThat(policy(allow("dynamodb:GetItem", TABLE_ARN, null)).allows(put("A#1"))).isFalse();
    assertThat(policy(allow("dynamodb:GetItem", TABLE_ARN, null)).allows(get("A#1"))).isTrue();
  }

  @Test
  void matchesActionsWithoutCase_andWithWildcards() {
    assertThat(policy(allow("DynamoDB:getitem", TABLE_ARN, null)).allows(get("A#1"))).isTrue();
    assertThat(policy(allow("dynamodb:Get*", TABLE_ARN, null)).allows(get("A#1"))).isTrue();
    assertThat(policy(allow("dynamodb:Get*", TABLE_ARN, null)).allows(put("A#1"))).isFalse();
  }

  @Test
  void anIndexIsItsOwnResource() {
    QueryRequest onIndex = QueryRequest.builder().tableName("t").indexName("GSI1").keyConditionExpression("#pk = :pk")
        .expressionAttributeNames(Map.of("#pk", "GSI1PK")).expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("W#1")))
        .build();
    assertThat(policy(allow("dynamodb:Query", TABLE_ARN, null)).allows(onIndex)).isFalse();
    assertThat(policy(allow("dynamodb:Query", TABLE_ARN + "/index/GSI1", null)).allows(onIndex)).isTrue();
    assertThat(policy(allow("dynamodb:Query", TABLE_ARN + "/index/*", null)).allows(onIndex)).isTrue();
    assertThat(policy(allow("dynamodb:Query", TABLE_ARN + "/index/GSI1", null))
        .allows(onIndex.toBuilder().indexName("GSI2").build())).isFalse();
  }

  @Test
  void leadingKeysOfAQuery_areThePartitionKeyOfWhatItReads() {
    IamPolicyEvaluator warehouses = policy(allow("dynamodb:Query", TABLE_ARN + "/index/GSI1", leadingKeysPresent("W#*")));
    QueryRequest.Builder query = QueryRequest.builder().tableName("t").indexName("GSI1")
        .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
        .expressionAttributeNames(Map.of("#pk", "GSI1PK", "#sk", "GSI1SK"));
    assertThat(warehouses.allows(query.expressionAttributeValues(
        Map.of(":pk", AttributeValue.fromS("W#1"), ":prefix", AttributeValue.fromS("P#"))).build())).isTrue();
    assertThat(warehouses.allows(query.expressionAttributeValues(
        Map.of(":pk", AttributeValue.fromS("C#1"), ":prefix", AttributeValue.fromS("W#"))).build())).isFalse();
    // The legacy form names it too.
    assertThat(warehouses.allows(QueryRequest.builder().tableName("t").indexName("GSI1")
        .keyConditions(Map.of("GSI1PK", Condition.builder().comparisonOperator(ComparisonOperator.EQ)
            .attributeValueList(AttributeValue.fromS("W#2")).build()))
        .build())).isTrue();
  }

  @Test
  void forAllValues_holdsForARequestThatNamesNoPartitionKey_unlessNullRequiresOne() {
    ScanRequest scan = ScanRequest.builder().tableName("t").build();
    // This is IAM's rule, and why every generated statement also says Null: false.
    assertThat(policy(allow("dynamodb:Scan", TABLE_ARN, leadingKeys("A#*"))).allows(scan)).isTrue();
    assertThat(policy(allow("dynamodb:Scan", TABLE_ARN, leadingKeysPresent("A#*"))).allows(scan)).isFalse();
    assertThat(policy(allow("dynamodb:GetItem", TABLE_ARN, leadingKeysPresent("A#*", "B#?"))).allows(get("B#1"))).isTrue();
    assertThat(policy(allow("dynamodb:GetItem", TABLE_ARN, leadingKeysPresent("A#*", "B#?"))).allows(get("B#12"))).isFalse();
  }

  @Test
  void aTransaction_isAllowedOnlyWhenEachItemIs_asItsOwnActionInsideATransaction() {
    String transactionOnly = "{\"ForAllValues:StringLike\": {\"dynamodb:LeadingKeys\": [\"A#*\"]},"
        + " \"ForAnyValue:StringEquals\": {\"dynamodb:EnclosingOperation\": [\"TransactWriteItems\"]}}";
    IamPolicyEvaluator puts = policy(allow("dynamodb:PutItem", TABLE_ARN, transactionOnly));
    assertThat(puts.allows(TransactWriteItemsRequest.builder().transactItems(putItem("A#1"), putItem("A#2")).build())).isTrue();
    assertThat(puts.denied(TransactWriteItemsRequest.builder().transactItems(putItem("A#1"), putItem("B#2")).build()))
        .singleElement().asString().contains("dynamodb:PutItem", "B#2");
    assertThat(puts.allows(TransactWriteItemsRequest.builder().transactItems(putItem("A#1"),
        TransactWriteItem.builder().delete(d -> d.tableName("t").key(key("A#3"))).build()).build())).isFalse();
    assertThat(puts.allows(put("A#1"))).as("the same put, alone").isFalse();
  }

  @Test
  void aBatchWrite_isItsOwnAction_withEveryKeyOfTheTable() {
    IamPolicyEvaluator batch = policy(allow("dynamodb:BatchWriteItem", TABLE_ARN, leadingKeysPresent("A#*")));
    WriteRequest a = WriteRequest.builder().putRequest(PutRequest.builder().item(key("A#1")).build()).build();
    WriteRequest b = WriteRequest.builder().putRequest(PutRequest.builder().item(key("B#1")).build()).build();
    assertThat(batch.allows(BatchWriteItemRequest.builder().requestItems(Map.of("t", List.of(a))).build())).isTrue();
    assertThat(batch.allows(BatchWriteItemRequest.builder().requestItems(Map.of("t", List.of(a, b))).build())).isFalse();
    assertThat(policy(allow("dynamodb:PutItem", TABLE_ARN, null))
        .allows(BatchWriteItemRequest.builder().requestItems(Map.of("t", List.of(a))).build())).isFalse();
  }

  @Test
  void tellsWhichGrantsNoAllowedRequestUsed() {
    IamPolicyEvaluator reads = policy(
        "{\"Sid\": \"Get\", \"Effect\": \"Allow\", \"Action\": \"dynamodb:GetItem\", \"Resource\": \"" + TABLE_ARN
            + "\", \"Condition\": " + leadingKeysPresent("A#*", "B#*") + "}",
        "{\"Sid\": \"Scan\", \"Effect\": \"Allow\", \"Action\": \"dynamodb:Scan\", \"Resource\": \"" + TABLE_ARN + "\"}");
    reads.assertAllows(List.of(get("A#1"), ScanRequest.builder().tableName("t").build()));
    assertThatThrownBy(reads::assertEveryGrantUsed).isInstanceOf(AssertionError.class).hasMessageContaining("Get on B#*");
    reads.assertAllows(List.of(get("B#7")));
    reads.assertEveryGrantUsed();
  }

  @Test
  void refusesWhatItDoesNotEvaluate() {
    assertThatThrownBy(() -> policy("{\"Effect\": \"Deny\", \"Action\": \"*\", \"Resource\": \"*\"}"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only Allow");
    assertThatThrownBy(() -> policy("{\"Effect\": \"Allow\", \"NotAction\": \"dynamodb:Scan\", \"Resource\": \"*\"}"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NotAction");
    assertThatThrownBy(() -> policy(allow("dynamodb:GetItem", TABLE_ARN,
        "{\"ForAllValues:StringLikeIfExists\": {\"dynamodb:LeadingKeys\": [\"A#*\"]}}")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("StringLikeIfExists");
    assertThatThrownBy(() -> policy(allow("dynamodb:GetItem", "arn:aws:dynamodb:${AWS::Region}:1:table/t", null)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unfilled");
    assertThatThrownBy(() -> policy().checks(DescribeTableRequest.builder().tableName("t").build()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not modelled");
  }
}
