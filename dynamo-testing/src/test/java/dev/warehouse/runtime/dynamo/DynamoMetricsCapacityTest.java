package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/** The capacity counter's kinds, on answers of the launcher, which reports capacity as DynamoDB does. */
@Tag("integration")
class DynamoMetricsCapacityTest {

  @Test
  void aTransactionsConditionCheck_countsAsRead_andItsWritesAsWrite() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    String table = TestServices.uniqueTableName();
    try (DynamoDbAsyncClient dynamo = DynamoClients.create(
        TestServices.config("metrics-capacity-test", table, MotoServer.endpoint(), Duration.ofSeconds(10)),
        List.of(new DynamoMetrics(registry, new HotKeys(Clock.systemUTC(), registry, 1.0))))) {
      TableSetup.ensureTable(dynamo, table, Duration.ofMinutes(1));
      Map<String, AttributeValue> checked = Map.of("PK", AttributeValue.fromS("C"), "SK", AttributeValue.fromS("1"));
      dynamo.putItem(b -> b.tableName(table).item(checked).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
          .overrideConfiguration(DynamoMetrics.pattern("T1"))).join();

      // A small Put (1 write unit, twice) and a ConditionCheck of a small item (a transactional read: 2 units).
      dynamo.transactWriteItems(b -> b.transactItems(
              TransactWriteItem.builder().put(p -> p.tableName(table)
                  .item(Map.of("PK", AttributeValue.fromS("P"), "SK", AttributeValue.fromS("1")))).build(),
              TransactWriteItem.builder().conditionCheck(c -> c.tableName(table).key(checked)
                  .conditionExpression("attribute_exists(PK)")).build())
          .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
          .overrideConfiguration(DynamoMetrics.pattern("T2"))).join();
    }

    assertThat(units(registry, "PutItem", "T1", "write")).isEqualTo(1.0);
    assertThat(units(registry, "TransactWriteItems", "T2", "write")).isEqualTo(2.0);
    assertThat(units(registry, "TransactWriteItems", "T2", "read")).isEqualTo(2.0);
  }

  private static double units(SimpleMeterRegistry registry, String operation, String pattern, String kind) {
    Counter counter = registry.find("dynamodb.consumed.capacity.units")
        .tags("operation", operation, "pattern", pattern, "kind", kind).counter();
    return counter == null ? 0 : counter.count();
  }
}
