package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.testing.TestServices;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * The reason the launcher exists: moto's own server loses updates under concurrent conditional
 * writes. Through the launcher, the race that gave 103-108 successes gives exactly 100.
 */
class SerializedMotoLauncherTest {

  private static final String TABLE = TestServices.uniqueTableName();
  private static DynamoDbAsyncClient dynamo;

  @BeforeAll
  static void setUp() {
    dynamo = TestServices.dynamo(TABLE);
  }

  @AfterAll
  static void tearDown() {
    dynamo.close();
  }

  @Test
  void concurrentConditionalDecrements_neverOversell() throws Exception {
    Map<String, AttributeValue> key = Map.of(
        SingleTable.PK, AttributeValue.fromS("RACE#stock"), SingleTable.SK, AttributeValue.fromS("METADATA"));
    dynamo.putItem(b -> b.tableName(TABLE).item(Map.of(
        SingleTable.PK, key.get(SingleTable.PK), SingleTable.SK, key.get(SingleTable.SK),
        "qty", AttributeValue.fromN("100")))).join();

    int callers = 16;
    int decrementsEach = 25;
    AtomicInteger successes = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      done.add(CompletableFuture.runAsync(() -> {
        await(start);
        for (int i = 0; i < decrementsEach; i++) {
          try {
            dynamo.updateItem(b -> b.tableName(TABLE).key(key)
                .updateExpression("SET #q = #q - :one")
                .conditionExpression("#q >= :one")
                .expressionAttributeNames(Map.of("#q", "qty"))
                .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1")))).join();
            successes.incrementAndGet();
          } catch (CompletionException e) {
            assertThat(e.getCause()).isInstanceOf(ConditionalCheckFailedException.class);
            refused.incrementAndGet();
          }
        }
      }, pool));
    }
    start.countDown();
    CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).join();
    pool.shutdown();

    String left = dynamo.getItem(b -> b.tableName(TABLE).key(key).consistentRead(true)).join().item().get("qty").n();
    assertThat(successes.get()).isEqualTo(100);
    assertThat(refused.get()).isEqualTo(callers * decrementsEach - 100);
    assertThat(left).isEqualTo("0");
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
