package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionCheck;
import software.amazon.awssdk.services.dynamodb.model.Delete;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.Update;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/** Which partition keys each kind of request is counted under. */
class RequestKeysTest {

  private static Map<String, AttributeValue> key(String pk, String sk) {
    return Map.of("PK", AttributeValue.fromS(pk), "SK", AttributeValue.fromS(sk));
  }

  @Test
  void singleItemRequests_countTheirPk() {
    assertThat(RequestKeys.partitionKeys(GetItemRequest.builder().key(key("SERIAL#1", "METADATA")).build()))
        .containsExactly("SERIAL#1");
    assertThat(RequestKeys.partitionKeys(PutItemRequest.builder().item(key("PRODUCT#P1", "WAREHOUSE#W1")).build()))
        .containsExactly("PRODUCT#P1");
    assertThat(RequestKeys.partitionKeys(UpdateItemRequest.builder().key(key("ORDER#O1", "METADATA")).build()))
        .containsExactly("ORDER#O1");
    assertThat(RequestKeys.partitionKeys(DeleteItemRequest.builder().key(key("ORDER#O2", "METADATA")).build()))
        .containsExactly("ORDER#O2");
  }

  @Test
  void queries_countTheirPkValue_theGsiKeyOnAnIndex() {
    assertThat(RequestKeys.partitionKeys(QueryRequest.builder().indexName("GSI1")
        .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
        .expressionAttributeNames(Map.of("#pk", "GSI1PK", "#sk", "GSI1SK"))
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("WAREHOUSE#W1"), ":prefix", AttributeValue.fromS("PRODUCT#")))
        .build())).containsExactly("WAREHOUSE#W1");
  }

  @Test
  void transactions_countEachItemsPk() {
    TransactWriteItemsRequest request = TransactWriteItemsRequest.builder().transactItems(
        TransactWriteItem.builder().put(Put.builder().item(key("CUSTOMER#C1", "ORDER#2026-07-26#O1")).build()).build(),
        TransactWriteItem.builder().put(Put.builder().item(key("ORDER#O1", "METADATA")).build()).build(),
        TransactWriteItem.builder().update(Update.builder().key(key("CUSTOMER#C1", "REQUEST#r1")).build()).build(),
        TransactWriteItem.builder().delete(Delete.builder().key(key("PRODUCT#P1", "LOW#1")).build()).build(),
        TransactWriteItem.builder().conditionCheck(ConditionCheck.builder().key(key("PRODUCT#P2", "X")).build()).build())
        .build();
    assertThat(RequestKeys.partitionKeys(request))
        .containsExactly("CUSTOMER#C1", "ORDER#O1", "CUSTOMER#C1", "PRODUCT#P1", "PRODUCT#P2");
  }

  @Test
  void scans_andRequestsWithoutKeys_countNone() {
    assertThat(RequestKeys.partitionKeys(ScanRequest.builder().build())).isEmpty();
    assertThat(RequestKeys.partitionKeys(GetItemRequest.builder().build())).isEmpty();
    assertThat(RequestKeys.partitionKeys(QueryRequest.builder().build())).isEmpty();
  }
}
