package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.moto.MotoProcess;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Capacity;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * The launcher's ConsumedCapacity, in both its modes, for items of known size: what DynamoDB documents
 * (reads in 4 KB units, eventual ones half; a Query billed on the total size it read, before its
 * filter, a Scan likewise; writes in 1 KB units of the larger of before and after; transactions twice;
 * writes to GSI1 added), where moto bills 0.5 per GetItem, 1 per Query, Scan page and PutItem, 0.5 per
 * UpdateItem unasked and nothing for a transaction. The strict launcher runs without stale reads here: a read right after its
 * write must see the item whose size the test knows.
 */
@Tag("integration")
class LauncherConsumedCapacityTest {

  /**
   * Bytes per item, counting attribute names and values: "B"/"1" with {@code data} of 5,000 characters
   * is PK 2+1, SK 2+1, data 4+5,000 = 5,010 bytes; "M"/i with 3,000 characters and the GSI1 keys
   * "G"/i is 3 + 3 + 3,004 + GSI1PK 6+1 + GSI1SK 6+1 = 3,024 bytes.
   */
  private static final int BIG = 5_010;
  private static final int INDEXED = 3_024;

  @ParameterizedTest
  @ValueSource(strings = {"--lenient", "--stale-read-probability=0"})
  void reportsTheCapacityDynamoDbDocuments_fromTheSizesOfTheItems(String mode) {
    try (MotoProcess moto = MotoServer.startOwn(mode);
        DynamoDbAsyncClient dynamo = DynamoClients.create(
            TestServices.config("capacity-test", "unused", moto.endpoint(), Duration.ofSeconds(10)), List.of())) {
      String table = TestServices.uniqueTableName();
      TableSetup.ensureTable(dynamo, table, Duration.ofMinutes(1));
      SoftAssertions softly = new SoftAssertions();

      // PutItem of 5,010 bytes: five 1 KB write units.
      softly.assertThat(units(dynamo.putItem(b -> b.tableName(table).item(item("B", "1", 5_000, false))
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join().consumedCapacity())).as("PutItem").isEqualTo(5.0);
      // GetItem of it: two 4 KB units strongly consistent, half that eventually; a missing item, the minimum.
      softly.assertThat(units(dynamo.getItem(b -> b.tableName(table).key(key("B", "1"))
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join().consumedCapacity())).as("GetItem eventual").isEqualTo(1.0);
      softly.assertThat(units(dynamo.getItem(b -> b.tableName(table).key(key("B", "1")).consistentRead(true)
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join().consumedCapacity())).as("GetItem strong").isEqualTo(2.0);
      softly.assertThat(units(dynamo.getItem(b -> b.tableName(table).key(key("B", "9"))
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join().consumedCapacity())).as("GetItem missing").isEqualTo(0.5);

      for (int i = 1; i <= 3; i++) {
        String sk = Integer.toString(i);
        dynamo.putItem(b -> b.tableName(table).item(item("M", sk, 3_000, true))).join();
      }
      dynamo.putItem(b -> b.tableName(table).item(item("M", "4", 5_000, false))).join();
      // Query of partition M: 3 x 3,024 + 5,010 = 14,082 bytes, rounded up once: 4 units, 2 eventually.
      assertThat(3 * INDEXED + BIG).isEqualTo(14_082);
      softly.assertThat(units(dynamo.query(b -> b.tableName(table).keyConditionExpression("PK = :pk")
          .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("M")))
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join().consumedCapacity())).as("Query eventual").isEqualTo(2.0);
      // The filter drops the 5,010-byte item from the answer, not from the bill.
      var filtered = dynamo.query(b -> b.tableName(table).keyConditionExpression("PK = :pk")
          .filterExpression("attribute_exists(GSI1PK)").consistentRead(true)
          .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("M")))
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join();
      softly.assertThat(filtered.count()).as("Query filtered count").isEqualTo(3);
      softly.assertThat(units(filtered.consumedCapacity())).as("Query strong, filtered").isEqualTo(4.0);
      // Query of GSI1: the three indexed items as projected there (ALL), 9,072 bytes: 3 units, eventual.
      softly.assertThat(units(dynamo.query(b -> b.tableName(table).indexName(SingleTable.GSI1)
          .keyConditionExpression("GSI1PK = :g").expressionAttributeValues(Map.of(":g", AttributeValue.fromS("G")))
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join().consumedCapacity())).as("Query GSI1").isEqualTo(1.5);

      // UpdateItem of an indexed item to 3,027 bytes: 3 units on the table and 3 on GSI1, whose copy changed too.
      ConsumedCapacity update = dynamo.updateItem(b -> b.tableName(table).key(key("M", "1")).updateExpression("SET n = :n")
          .expressionAttributeValues(Map.of(":n", AttributeValue.fromN("5")))
          .returnConsumedCapacity(ReturnConsumedCapacity.INDEXES)).join().consumedCapacity();
      softly.assertThat(units(update)).as("UpdateItem total").isEqualTo(6.0);
      softly.assertThat(Optional.ofNullable(update.table()).map(Capacity::capacityUnits)).as("UpdateItem table").contains(3.0);
      softly.assertThat(Optional.ofNullable(update.globalSecondaryIndexes().get(SingleTable.GSI1)).map(Capacity::capacityUnits))
          .as("UpdateItem GSI1").contains(3.0);
      // Not asked, not answered (moto answers 0.5 regardless).
      softly.assertThat(dynamo.updateItem(b -> b.tableName(table).key(key("M", "1")).updateExpression("SET n = :n")
          .expressionAttributeValues(Map.of(":n", AttributeValue.fromN("6")))).join().consumedCapacity())
          .as("UpdateItem unasked").isNull();

      // A transaction: a Put of a 6-byte item (1 unit, twice) and a ConditionCheck of the 5,010-byte item (a
      // transactional read: 2 units, twice).
      var transaction = dynamo.transactWriteItems(b -> b.transactItems(
              TransactWriteItem.builder().put(p -> p.tableName(table).item(key("T", "1"))).build(),
              TransactWriteItem.builder().conditionCheck(c -> c.tableName(table).key(key("B", "1"))
                  .conditionExpression("attribute_exists(PK)")).build())
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join();
      softly.assertThat(transaction.consumedCapacity()).as("TransactWriteItems").hasSize(1);
      if (transaction.hasConsumedCapacity() && !transaction.consumedCapacity().isEmpty()) {
        ConsumedCapacity total = transaction.consumedCapacity().get(0);
        softly.assertThat(total.tableName()).isEqualTo(table);
        softly.assertThat(total.capacityUnits()).as("TransactWriteItems total").isEqualTo(6.0);
        softly.assertThat(total.readCapacityUnits()).as("TransactWriteItems reads").isEqualTo(4.0);
        softly.assertThat(total.writeCapacityUnits()).as("TransactWriteItems writes").isEqualTo(2.0);
      }

      // A Scan, filtered down to the 6-byte item, is billed on all it read: 5,010 + 3,027 (M/1 with n) + 3,024 x 2
      // + 5,010 + 6 = 19,101 bytes, 5 units, eventually consistent.
      var scan = dynamo.scan(b -> b.tableName(table).filterExpression("PK = :t")
          .expressionAttributeValues(Map.of(":t", AttributeValue.fromS("T")))
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).join();
      softly.assertThat(scan.count()).as("Scan count").isEqualTo(1);
      softly.assertThat(units(scan.consumedCapacity())).as("Scan").isEqualTo(2.5);
      softly.assertAll();
    }
  }

  private static double units(ConsumedCapacity capacity) {
    assertThat(capacity).as("ConsumedCapacity").isNotNull();
    assertThat(capacity.capacityUnits()).as("CapacityUnits").isNotNull();
    return capacity.capacityUnits(); // halves and whole units: exact in binary
  }

  private static Map<String, AttributeValue> key(String pk, String sk) {
    return Map.of("PK", AttributeValue.fromS(pk), "SK", AttributeValue.fromS(sk));
  }

  private static Map<String, AttributeValue> item(String pk, String sk, int dataChars, boolean indexed) {
    Map<String, AttributeValue> item = new HashMap<>(key(pk, sk));
    item.put("data", AttributeValue.fromS("x".repeat(dataChars)));
    if (indexed) {
      item.put(SingleTable.GSI1_PK, AttributeValue.fromS("G"));
      item.put(SingleTable.GSI1_SK, AttributeValue.fromS(sk));
    }
    return item;
  }
}
