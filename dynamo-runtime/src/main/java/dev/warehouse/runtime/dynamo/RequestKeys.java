package dev.warehouse.runtime.dynamo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The partition keys a DynamoDB request goes to, for the hot-key counts: the {@code PK} of a GetItem,
 * PutItem, UpdateItem or DeleteItem; a Query's {@code :pk} value (every query of the data-access layer
 * names its partition key so, and on GSI1 that value is the {@code GSI1PK}); each item's {@code PK} in
 * a TransactWriteItems or TransactGetItems, once per item. Other requests (Scan, batches, table operations) go
 * to none.
 */
final class RequestKeys {

  /** The expression value every Query names its partition key with. */
  static final String QUERY_PARTITION_VALUE = ":pk";

  private RequestKeys() {}

  static List<String> partitionKeys(SdkRequest request) {
    if (request instanceof GetItemRequest r) {
      return one(r.hasKey() ? r.key() : Map.of(), SingleTable.PK);
    } else if (request instanceof QueryRequest r) {
      return one(r.hasExpressionAttributeValues() ? r.expressionAttributeValues() : Map.of(), QUERY_PARTITION_VALUE);
    } else if (request instanceof PutItemRequest r) {
      return one(r.hasItem() ? r.item() : Map.of(), SingleTable.PK);
    } else if (request instanceof UpdateItemRequest r) {
      return one(r.hasKey() ? r.key() : Map.of(), SingleTable.PK);
    } else if (request instanceof DeleteItemRequest r) {
      return one(r.hasKey() ? r.key() : Map.of(), SingleTable.PK);
    } else if (request instanceof TransactWriteItemsRequest r && r.hasTransactItems()) {
      List<String> keys = new ArrayList<>(r.transactItems().size());
      for (TransactWriteItem item : r.transactItems()) {
        Map<String, AttributeValue> key = itemKey(item);
        AttributeValue pk = key.get(SingleTable.PK);
        if (pk != null && pk.s() != null) {
          keys.add(pk.s());
        }
      }
      return keys;
    } else if (request instanceof software.amazon.awssdk.services.dynamodb.model.TransactGetItemsRequest r
        && r.hasTransactItems()) {
      List<String> keys = new ArrayList<>(r.transactItems().size());
      r.transactItems().forEach(item -> keys.addAll(one(item.get().key(), SingleTable.PK)));
      return keys;
    }
    return List.of();
  }

  private static Map<String, AttributeValue> itemKey(TransactWriteItem item) {
    if (item.put() != null && item.put().hasItem()) {
      return item.put().item();
    } else if (item.update() != null && item.update().hasKey()) {
      return item.update().key();
    } else if (item.delete() != null && item.delete().hasKey()) {
      return item.delete().key();
    } else if (item.conditionCheck() != null && item.conditionCheck().hasKey()) {
      return item.conditionCheck().key();
    }
    return Map.of();
  }

  private static List<String> one(Map<String, AttributeValue> attributes, String name) {
    AttributeValue value = attributes.get(name);
    return value == null || value.s() == null ? List.of() : List.of(value.s());
  }
}
