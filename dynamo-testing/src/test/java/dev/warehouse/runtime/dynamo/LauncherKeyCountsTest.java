package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.moto.MotoProcess;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The launcher's {@code --count-keys}: each request's partition keys, per table, read and reset over
 * HTTP, as the benchmark reads which shards its writes went to.
 */
@Tag("integration")
class LauncherKeyCountsTest {

  private static MotoProcess moto;
  private static DynamoDbAsyncClient dynamo;

  @BeforeAll
  static void start() {
    moto = MotoServer.startOwn("--count-keys", "--lenient");
    dynamo = DynamoClients.create(TestServices.config("key-counts-test", "unused", moto.endpoint(), Duration.ofSeconds(10)),
        List.of());
  }

  @AfterAll
  static void stop() {
    if (dynamo != null) {
      dynamo.close();
    }
    if (moto != null) {
      moto.close();
    }
  }

  private static Map<String, AttributeValue> key(String pk, String sk) {
    return Map.of("PK", AttributeValue.fromS(pk), "SK", AttributeValue.fromS(sk));
  }

  @Test
  void countsEachRequestsPartitionKeys_perTableAndKind_andResets() {
    String table = TestServices.uniqueTableName();
    String other = TestServices.uniqueTableName();
    TableSetup.ensureTable(dynamo, table, Duration.ofMinutes(1));
    TableSetup.ensureTable(dynamo, other, Duration.ofMinutes(1));

    dynamo.putItem(b -> b.tableName(table).item(key("A", "1"))).join();
    dynamo.updateItem(b -> b.tableName(table).key(key("A", "2")).updateExpression("SET n = :n")
        .expressionAttributeValues(Map.of(":n", AttributeValue.fromN("1")))).join();
    dynamo.deleteItem(b -> b.tableName(table).key(key("B", "1"))).join();
    dynamo.batchWriteItem(b -> b.requestItems(Map.of(table, List.of(
        WriteRequest.builder().putRequest(p -> p.item(key("C", "1"))).build(),
        WriteRequest.builder().deleteRequest(d -> d.key(key("A", "9"))).build())))).join();
    dynamo.transactWriteItems(b -> b.transactItems(
        TransactWriteItem.builder().put(p -> p.tableName(table).item(key("A", "3"))).build(),
        TransactWriteItem.builder().delete(d -> d.tableName(table).key(key("C", "1"))).build(),
        TransactWriteItem.builder().conditionCheck(c -> c.tableName(table).key(key("D", "1"))
            .conditionExpression("attribute_not_exists(PK)")).build())).join();
    dynamo.getItem(b -> b.tableName(table).key(key("A", "1"))).join();
    dynamo.query(b -> b.tableName(table).keyConditionExpression("PK = :pk")
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("B")))).join();
    dynamo.putItem(b -> b.tableName(other).item(key("A", "1"))).join();

    MotoProcess.KeyCounts counts = moto.keyCounts(table);
    assertThat(counts.writes()).containsExactlyInAnyOrderEntriesOf(Map.of("A", 4L, "B", 1L, "C", 2L));
    assertThat(counts.reads()).containsExactlyInAnyOrderEntriesOf(Map.of("A", 1L, "B", 1L));
    assertThat(moto.keyCounts(other).writes()).containsExactly(Map.entry("A", 1L));

    moto.resetKeyCounts(table);
    assertThat(moto.keyCounts(table).writes()).isEmpty();
    assertThat(moto.keyCounts(other).writes()).containsExactly(Map.entry("A", 1L));
  }
}
