package dev.warehouse.runtime.testing;

import dev.warehouse.runtime.dynamo.TableKey;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;

/** Requests built by hand for {@link IamPolicyEvaluator}: what a service could send, forged or not. */
public final class IamRequests {

  private IamRequests() {}

  /** A Query on {@code index} (null: the table) for the partition {@code partitionAttribute} = {@code partition}. */
  public static QueryRequest query(String table, String index, String partitionAttribute, String partition) {
    return QueryRequest.builder().tableName(table).indexName(index)
        .keyConditionExpression("#pk = :pk")
        .expressionAttributeNames(Map.of("#pk", partitionAttribute))
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS(partition)))
        .build();
  }

  public static TransactWriteItem put(String table, TableKey key) {
    return TransactWriteItem.builder().put(p -> p.tableName(table).item(key.attributes())).build();
  }

  public static TransactWriteItem delete(String table, TableKey key) {
    return TransactWriteItem.builder().delete(d -> d.tableName(table).key(key.attributes())).build();
  }

  public static TransactWriteItemsRequest transaction(TransactWriteItem... items) {
    return TransactWriteItemsRequest.builder().transactItems(items).build();
  }
}
