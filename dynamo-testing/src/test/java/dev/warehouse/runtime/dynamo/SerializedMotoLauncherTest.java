package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.testing.TestServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * The reason the launcher exists: moto's own server loses updates under concurrent conditional
 * writes. Through the launcher, the race that gave 103-108 successes gives exactly 100. It also
 * replaces moto's whole-table transaction copy and whole-table query sort with paths that touch only
 * what a request names: a cancelled transaction must still leave every item as it was, and queries
 * must still answer in key order, page by page.
 *
 * <p>The launcher runs strict: an eventually consistent read lags behind recent writes. Reads of the
 * table here ask for consistency; the index, which cannot be read consistently, is read once the
 * writes have become visible.
 */
@Tag("integration")
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

  @Test
  void cancelledTransaction_leavesEveryItemAsItWas() {
    Map<String, AttributeValue> existing = key("TX#existing", "METADATA");
    Map<String, AttributeValue> doomed = key("TX#doomed", "METADATA");
    Map<String, AttributeValue> blocker = key("TX#blocker", "METADATA");
    put(existing, Map.of("n", AttributeValue.fromN("1")));
    put(doomed, Map.of("n", AttributeValue.fromN("7")));
    put(blocker, Map.of("n", AttributeValue.fromN("3")));

    CompletionException failure = catchCompletion(dynamo.transactWriteItems(b -> b.transactItems(
        t -> t.put(p -> p.tableName(TABLE).item(with(key("TX#new", "METADATA"), Map.of("n", AttributeValue.fromN("9"))))),
        t -> t.update(u -> u.tableName(TABLE).key(existing).updateExpression("SET n = n + :one")
            .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1")))),
        t -> t.delete(d -> d.tableName(TABLE).key(doomed)),
        t -> t.conditionCheck(c -> c.tableName(TABLE).key(blocker).conditionExpression("attribute_not_exists(PK)")
            .returnValuesOnConditionCheckFailure("ALL_OLD")))));

    TransactionCanceledException cancelled = (TransactionCanceledException) failure.getCause();
    assertThat(cancelled.cancellationReasons()).extracting(CancellationReason::code)
        .containsExactly("None", "None", "None", "ConditionalCheckFailed");
    assertThat(cancelled.cancellationReasons().get(3).item()).containsEntry("n", AttributeValue.fromN("3"));
    assertThat(get(key("TX#new", "METADATA"))).isEmpty();
    assertThat(get(existing)).containsEntry("n", AttributeValue.fromN("1"));
    assertThat(get(doomed)).containsEntry("n", AttributeValue.fromN("7"));
  }

  @Test
  void committedTransaction_writesEveryItem() {
    Map<String, AttributeValue> counter = key("TXOK#counter", "METADATA");
    put(counter, Map.of("n", AttributeValue.fromN("1")));

    dynamo.transactWriteItems(b -> b.transactItems(
        t -> t.put(p -> p.tableName(TABLE).item(key("TXOK#new", "METADATA")).conditionExpression("attribute_not_exists(PK)")),
        t -> t.update(u -> u.tableName(TABLE).key(counter).updateExpression("SET n = n + :one")
            .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1")))))).join();

    assertThat(get(key("TXOK#new", "METADATA"))).isNotEmpty();
    assertThat(get(counter)).containsEntry("n", AttributeValue.fromN("2"));
  }

  @Test
  void queries_answerOnlyTheirPartition_inKeyOrder_pageByPage() {
    for (int i = 0; i < 12; i++) {
      String sk = "ITEM#%02d".formatted(i);
      put(key("QA#left", sk), Map.of(SingleTable.GSI1_PK, AttributeValue.fromS("QG#" + (i % 2)),
          SingleTable.GSI1_SK, AttributeValue.fromS("L" + sk)));
      put(key("QA#right", sk), Map.of(SingleTable.GSI1_PK, AttributeValue.fromS("QG#" + (i % 2)),
          SingleTable.GSI1_SK, AttributeValue.fromS("R" + sk)));
    }

    List<String> newestFirst = new ArrayList<>();
    Map<String, AttributeValue> start = null;
    do {
      Map<String, AttributeValue> from = start;
      QueryResponse page = dynamo.query(b -> b.tableName(TABLE).keyConditionExpression("PK = :pk AND begins_with(SK, :p)")
          .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("QA#left"), ":p", AttributeValue.fromS("ITEM#")))
          .consistentRead(true).scanIndexForward(false).limit(5).exclusiveStartKey(from)).join();
      assertThat(page.scannedCount()).isEqualTo(page.count());
      page.items().forEach(item -> newestFirst.add(item.get(SingleTable.SK).s()));
      start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
    } while (start != null);
    assertThat(newestFirst).containsExactly("ITEM#11", "ITEM#10", "ITEM#09", "ITEM#08", "ITEM#07", "ITEM#06",
        "ITEM#05", "ITEM#04", "ITEM#03", "ITEM#02", "ITEM#01", "ITEM#00");

    awaitVisible(key("QA#right", "ITEM#11"));  // the last write: once it is visible, every earlier one is
    QueryResponse onIndex = dynamo.query(b -> b.tableName(TABLE).indexName(SingleTable.GSI1)
        .keyConditionExpression("GSI1PK = :g").expressionAttributeValues(Map.of(":g", AttributeValue.fromS("QG#1")))
        .limit(4)).join();
    assertThat(onIndex.items()).extracting(item -> item.get(SingleTable.GSI1_SK).s())
        .containsExactly("LITEM#01", "LITEM#03", "LITEM#05", "LITEM#07");
    assertThat(dynamo.query(b -> b.tableName(TABLE).keyConditionExpression("PK = :pk")
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("QA#nobody"))).consistentRead(true)).join().count()).isZero();
  }

  private static Map<String, AttributeValue> key(String pk, String sk) {
    return Map.of(SingleTable.PK, AttributeValue.fromS(pk), SingleTable.SK, AttributeValue.fromS(sk));
  }

  private static Map<String, AttributeValue> with(Map<String, AttributeValue> key, Map<String, AttributeValue> attributes) {
    Map<String, AttributeValue> item = new HashMap<>(key);
    item.putAll(attributes);
    return item;
  }

  private static void put(Map<String, AttributeValue> key, Map<String, AttributeValue> attributes) {
    dynamo.putItem(b -> b.tableName(TABLE).item(with(key, attributes))).join();
  }

  private static Map<String, AttributeValue> get(Map<String, AttributeValue> key) {
    return dynamo.getItem(b -> b.tableName(TABLE).key(key).consistentRead(true)).join().item();
  }

  /** Waits until eventually consistent reads see the item under {@code key}. */
  private static void awaitVisible(Map<String, AttributeValue> key) {
    Awaitility.await("eventually consistent reads see " + key).atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(20)).until(() -> !dynamo.getItem(b -> b.tableName(TABLE).key(key)).join().item().isEmpty());
  }

  private static CompletionException catchCompletion(CompletableFuture<?> call) {
    try {
      call.join();
    } catch (CompletionException e) {
      return e;
    }
    throw new AssertionError("expected the call to fail");
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
