package dev.warehouse.runtime.dynamo;

import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** The primary key of one item of the single table. Built by each aggregate's named key functions. */
public record TableKey(String pk, String sk) {

  /** The key of {@code item} (or of a key's attributes). */
  public static TableKey of(Map<String, AttributeValue> item) {
    return new TableKey(item.get(SingleTable.PK).s(), item.get(SingleTable.SK).s());
  }

  /** The key as DynamoDB attributes ({@code PK}, {@code SK}). */
  public Map<String, AttributeValue> attributes() {
    return Map.of(SingleTable.PK, AttributeValue.fromS(pk), SingleTable.SK, AttributeValue.fromS(sk));
  }
}
