package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.IdempotentParameterMismatchException;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.TransactionInProgressException;

/**
 * What the launcher's strict mode models of DynamoDB's documentation, seen through the SDK: a
 * ClientRequestToken's window, eventually consistent reads that lag behind writes, transactions
 * cancelled by conflicts, and a data lock that a client slow to send its body cannot hold. Each test
 * has a table of its own, with the per-table settings it needs.
 */
@Tag("integration")
class StrictMotoLauncherTest {

  /** A lag no test outlasts: reads made right after a write are within it however slow the machine. */
  private static final Duration LONG_LAG = Duration.ofSeconds(5);

  private static DynamoDbAsyncClient dynamo;
  private String table;

  @BeforeAll
  static void setUp() {
    assumeTrue(StrictMoto.isStrict(), "moto was started lenient (MOTO_LENIENT): nothing strict to test");
    dynamo = DynamoClients.create(TestServices.config("strict-moto-test", "unused"), List.of());
  }

  @AfterAll
  static void tearDown() {
    if (dynamo != null) {
      dynamo.close();
    }
  }

  @BeforeEach
  void createTable() {
    table = TestServices.uniqueTableName();
    TableSetup.ensureTable(dynamo, table, Duration.ofMinutes(1));
  }

  @AfterEach
  void resetTable() {
    StrictMoto.reset(table);
  }

  // ClientRequestToken

  @Test
  void transactWriteItems_appliesOnce_whenTokenReplayedWithSameParameters() {
    Map<String, AttributeValue> counter = key("COUNTER#1", "METADATA");
    put(counter, Map.of("n", n(0)));
    TransactWriteItemsRequest increment = increment(counter, 1, UUID.randomUUID().toString()).toBuilder()
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();

    dynamo.transactWriteItems(increment).join();
    TransactWriteItemsResponse replay = dynamo.transactWriteItems(increment).join();

    assertThat(consistentGet(counter)).containsEntry("n", n(1));
    assertThat(replay.consumedCapacity()).singleElement()
        .satisfies(capacity -> assertThat(capacity.tableName()).isEqualTo(table));
  }

  @Test
  void transactWriteItems_failsWithIdempotentParameterMismatch_whenTokenReusedWithOtherParameters() {
    Map<String, AttributeValue> counter = key("COUNTER#1", "METADATA");
    put(counter, Map.of("n", n(0)));
    String token = UUID.randomUUID().toString();
    dynamo.transactWriteItems(increment(counter, 1, token)).join();

    Throwable failure = failure(dynamo.transactWriteItems(increment(counter, 5, token)));

    assertThat(failure).isInstanceOf(IdempotentParameterMismatchException.class);
    assertThat(consistentGet(counter)).containsEntry("n", n(1));
  }

  @Test
  void transactWriteItems_appliesAgain_whenTokenReusedAfterItsWindow() {
    StrictMoto.table(table).tokenWindow(Duration.ofMillis(400)).apply();
    Map<String, AttributeValue> counter = key("COUNTER#1", "METADATA");
    put(counter, Map.of("n", n(0)));
    TransactWriteItemsRequest increment = increment(counter, 1, UUID.randomUUID().toString());

    dynamo.transactWriteItems(increment).join();
    dynamo.transactWriteItems(increment).join();
    assertThat(consistentGet(counter)).as("replayed within the window").containsEntry("n", n(1));

    // Sent again until it applies: each send within the window writes nothing, so it applies once, after the window.
    Awaitility.await("applied again after the window").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
        .until(() -> {
          dynamo.transactWriteItems(increment).join();
          return consistentGet(counter).get("n");
        }, value -> !value.equals(n(1)));
    assertThat(consistentGet(counter)).as("sent again after the window").containsEntry("n", n(2));
  }

  @Test
  void transactWriteItems_failsWithTransactionInProgress_whenDuplicateArrivesWhileFirstRuns() {
    StrictMoto.table(table).transactionLatency(Duration.ofMillis(500)).apply();
    Map<String, AttributeValue> counter = key("COUNTER#1", "METADATA");
    put(counter, Map.of("n", n(0)));
    TransactWriteItemsRequest increment = increment(counter, 1, UUID.randomUUID().toString());

    // Our clients make one attempt per call (the SDK would retry TransactionInProgressException as throttling).
    try (DynamoDbAsyncClient oneAttempt = DynamoClients.create(TestServices.config("strict-moto-test", table), List.of())) {
      CompletableFuture<TransactWriteItemsResponse> first = oneAttempt.transactWriteItems(increment);
      CompletableFuture<TransactWriteItemsResponse> duplicate = oneAttempt.transactWriteItems(increment);
      List<Throwable> failures = Stream.of(first, duplicate)
          .map(call -> call.handle((response, error) -> error).join())
          .filter(Objects::nonNull)
          .map(StrictMotoLauncherTest::unwrap)
          .toList();

      assertThat(failures).singleElement().isInstanceOf(TransactionInProgressException.class);
    }
    assertThat(consistentGet(counter)).containsEntry("n", n(1));
  }

  @Test
  void transactWriteItems_runsAnew_whenRetriedWithTheTokenOfACancelledOne() {
    Map<String, AttributeValue> counter = key("COUNTER#1", "METADATA");
    Map<String, AttributeValue> blocker = key("BLOCKER#1", "METADATA");
    put(counter, Map.of("n", n(0)));
    put(blocker, Map.of());
    TransactWriteItemsRequest guarded = TransactWriteItemsRequest.builder()
        .clientRequestToken(UUID.randomUUID().toString())
        .transactItems(increment(counter, 1, null).transactItems().get(0), TransactWriteItem.builder()
            .conditionCheck(c -> c.tableName(table).key(blocker).conditionExpression("attribute_not_exists(PK)")).build())
        .build();

    assertThat(failure(dynamo.transactWriteItems(guarded))).isInstanceOf(TransactionCanceledException.class);
    dynamo.deleteItem(b -> b.tableName(table).key(blocker)).join();
    dynamo.transactWriteItems(guarded).join();

    assertThat(consistentGet(counter)).containsEntry("n", n(1));
  }

  // Eventually consistent reads

  @Test
  void eventualGetItem_missesItem_rightAfterItsPut() {
    StrictMoto.table(table).staleReads(1.0, LONG_LAG).apply();
    Map<String, AttributeValue> key = key("ITEM#1", "METADATA");

    put(key, Map.of("n", n(1)));

    assertThat(eventualGet(key)).isEmpty();
    assertThat(consistentGet(key)).containsEntry("n", n(1));
  }

  @Test
  void eventualGetItem_seesOldVersion_rightAfterUpdate() {
    Map<String, AttributeValue> key = key("ITEM#1", "METADATA");
    settled(() -> put(key, Map.of("n", n(1))));

    dynamo.updateItem(b -> b.tableName(table).key(key).updateExpression("SET n = :two")
        .expressionAttributeValues(Map.of(":two", n(2)))).join();

    assertThat(eventualGet(key)).containsEntry("n", n(1));
    assertThat(consistentGet(key)).containsEntry("n", n(2));
  }

  @Test
  void eventualGetItem_stillSeesItem_rightAfterDelete() {
    Map<String, AttributeValue> key = key("ITEM#1", "METADATA");
    settled(() -> put(key, Map.of("n", n(1))));

    dynamo.deleteItem(b -> b.tableName(table).key(key)).join();

    assertThat(eventualGet(key)).containsEntry("n", n(1));
    assertThat(consistentGet(key)).isEmpty();
  }

  @Test
  void eventualGetItem_seesCurrentVersion_afterTheLag() {
    Duration lag = Duration.ofMillis(300);
    StrictMoto.table(table).staleReads(1.0, lag).apply();
    Map<String, AttributeValue> key = key("ITEM#1", "METADATA");

    long start = System.nanoTime();
    put(key, Map.of("n", n(1)));
    Map<String, AttributeValue> early = eventualGet(key);
    if (System.nanoTime() - start < lag.toNanos()) {  // on a machine slow enough, the read came after the lag
      assertThat(early).as("read within the lag").isEmpty();
    }
    Awaitility.await("read after the lag").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
        .until(() -> eventualGet(key), item -> n(1).equals(item.get("n")));
  }

  @Test
  void consistentGetItem_alwaysSeesCurrentVersion() {
    StrictMoto.table(table).staleReads(1.0, LONG_LAG).apply();
    Map<String, AttributeValue> key = key("ITEM#1", "METADATA");

    put(key, Map.of("n", n(1)));
    assertThat(consistentGet(key)).containsEntry("n", n(1));
    put(key, Map.of("n", n(2)));
    assertThat(consistentGet(key)).containsEntry("n", n(2));
    dynamo.deleteItem(b -> b.tableName(table).key(key)).join();
    assertThat(consistentGet(key)).isEmpty();
  }

  @Test
  void eventualQuery_seesPartitionAsItWas_consistentQuerySeesItNow() {
    settled(() -> {
      put(key("ORDER#1", "LINE#1"), Map.of("n", n(1)));
      put(key("ORDER#1", "LINE#2"), Map.of("n", n(1)));
    });

    dynamo.updateItem(b -> b.tableName(table).key(key("ORDER#1", "LINE#1")).updateExpression("SET n = :two")
        .expressionAttributeValues(Map.of(":two", n(2)))).join();
    dynamo.deleteItem(b -> b.tableName(table).key(key("ORDER#1", "LINE#2"))).join();
    put(key("ORDER#1", "LINE#3"), Map.of("n", n(1)));

    QueryRequest lines = QueryRequest.builder().tableName(table).keyConditionExpression("PK = :pk")
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("ORDER#1"))).build();
    assertThat(linesOf(dynamo.query(lines).join().items())).containsExactly("LINE#1=1", "LINE#2=1");
    assertThat(linesOf(dynamo.query(lines.toBuilder().consistentRead(true).build()).join().items()))
        .containsExactly("LINE#1=2", "LINE#3=1");
  }

  @Test
  void gsiQuery_seesIndexAsItWas_thoughItCannotBeConsistent() {
    settled(() -> put(key("PRODUCT#1", "METADATA"),
        Map.of(SingleTable.GSI1_PK, AttributeValue.fromS("WAREHOUSE#1"), SingleTable.GSI1_SK, AttributeValue.fromS("PRODUCT#1"))));

    put(key("PRODUCT#2", "METADATA"),
        Map.of(SingleTable.GSI1_PK, AttributeValue.fromS("WAREHOUSE#1"), SingleTable.GSI1_SK, AttributeValue.fromS("PRODUCT#2")));

    QueryRequest inWarehouse = QueryRequest.builder().tableName(table).indexName(SingleTable.GSI1)
        .keyConditionExpression("GSI1PK = :w").expressionAttributeValues(Map.of(":w", AttributeValue.fromS("WAREHOUSE#1")))
        .build();
    assertThat(dynamo.query(inWarehouse).join().items()).extracting(item -> item.get(SingleTable.GSI1_SK).s())
        .containsExactly("PRODUCT#1");
    assertThat(failure(dynamo.query(inWarehouse.toBuilder().consistentRead(true).build())))
        .as("DynamoDB refuses consistent reads on a global index").isInstanceOf(DynamoDbException.class)
        .hasMessageContaining("Consistent reads are not supported on global secondary indexes");
  }

  @Test
  void eventualReads_areFresh_whenStaleReadProbabilityIsZero() {
    StrictMoto.table(table).staleReads(0.0, LONG_LAG).apply();
    Map<String, AttributeValue> key = key("PRODUCT#1", "METADATA");

    put(key, Map.of(SingleTable.GSI1_PK, AttributeValue.fromS("WAREHOUSE#1"), SingleTable.GSI1_SK, AttributeValue.fromS("PRODUCT#1")));

    assertThat(eventualGet(key)).isNotEmpty();
    assertThat(dynamo.query(b -> b.tableName(table).keyConditionExpression("PK = :pk")
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS("PRODUCT#1")))).join().count()).isEqualTo(1);
    assertThat(dynamo.query(b -> b.tableName(table).indexName(SingleTable.GSI1).keyConditionExpression("GSI1PK = :w")
        .expressionAttributeValues(Map.of(":w", AttributeValue.fromS("WAREHOUSE#1")))).join().count()).isEqualTo(1);
  }

  // TransactionConflict

  @Test
  void transactWriteItems_cancelledByOneTransactionConflict_whenConflictRateIsOne() {
    StrictMoto.table(table).conflictRate(1.0).apply();
    Map<String, AttributeValue> counter = key("COUNTER#1", "METADATA");
    Map<String, AttributeValue> created = key("ORDER#1", "METADATA");
    Map<String, AttributeValue> checked = key("PRODUCT#1", "METADATA");
    put(counter, Map.of("n", n(0)));
    put(checked, Map.of());
    TransactWriteItemsRequest transaction = TransactWriteItemsRequest.builder()
        .clientRequestToken(UUID.randomUUID().toString())
        .transactItems(
            TransactWriteItem.builder().put(p -> p.tableName(table).item(created).conditionExpression("attribute_not_exists(PK)")).build(),
            increment(counter, 1, null).transactItems().get(0),
            TransactWriteItem.builder().conditionCheck(c -> c.tableName(table).key(checked).conditionExpression("attribute_exists(PK)")).build())
        .build();

    Throwable failure = failure(dynamo.transactWriteItems(transaction));

    assertThat(failure).isInstanceOf(TransactionCanceledException.class)
        .hasMessageContaining("Transaction cancelled, please refer cancellation reasons for specific reasons")
        .hasMessageContaining("TransactionConflict");
    List<CancellationReason> reasons = ((TransactionCanceledException) failure).cancellationReasons();
    assertThat(reasons).hasSize(3).extracting(CancellationReason::code)
        .containsOnly("None", "TransactionConflict").filteredOn("TransactionConflict"::equals).hasSize(1);
    assertThat(reasons).filteredOn(reason -> reason.code().equals("TransactionConflict")).singleElement()
        .satisfies(reason -> assertThat(reason.message()).isEqualTo("Transaction is ongoing for the item"));
    assertThat(consistentGet(created)).isEmpty();
    assertThat(consistentGet(counter)).containsEntry("n", n(0));

    StrictMoto.table(table).conflictRate(0.0).apply();
    dynamo.transactWriteItems(transaction).join();
    assertThat(consistentGet(created)).as("the retry with the same token ran anew").isNotEmpty();
    assertThat(consistentGet(counter)).containsEntry("n", n(1));
  }

  @Test
  void transactWriteItems_commits_whenConflictRateIsZero() {
    StrictMoto.table(table).conflictRate(0.0).apply();
    Map<String, AttributeValue> counter = key("COUNTER#1", "METADATA");
    put(counter, Map.of("n", n(0)));

    for (int i = 0; i < 10; i++) {
      dynamo.transactWriteItems(increment(counter, 1, UUID.randomUUID().toString())).join();
    }

    assertThat(consistentGet(counter)).containsEntry("n", n(10));
  }

  // The data lock

  @Test
  void clientSlowToSendItsBody_stallsNoOtherRequest() throws Exception {
    Map<String, AttributeValue> key = key("ITEM#1", "METADATA");
    put(key, Map.of("n", n(1)));
    URI endpoint = MotoServer.endpoint();
    byte[] body = ("{\"TableName\":\"" + table + "\",\"Key\":{\"PK\":{\"S\":\"ITEM#1\"},\"SK\":{\"S\":\"METADATA\"}}}")
        .getBytes(StandardCharsets.UTF_8);
    String head = "POST / HTTP/1.1\r\nHost: " + endpoint.getAuthority() + "\r\n"
        + "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.GetItem\r\n"
        + "Content-Length: " + body.length + "\r\n\r\n";

    try (Socket slow = new Socket(endpoint.getHost(), endpoint.getPort())) {
      OutputStream out = slow.getOutputStream();
      out.write(head.getBytes(StandardCharsets.US_ASCII));
      out.write(body, 0, body.length / 2);
      out.flush();
      // The server is now reading the rest, which does not come. A modelled slow client, not a wait: the
      // server shows nothing of it to poll for.
      Thread.sleep(100);

      // Stalled behind the slow client, the read would time out (TimeoutException) instead.
      Map<String, AttributeValue> item = dynamo.getItem(b -> b.tableName(table).key(key).consistentRead(true))
          .get(5, TimeUnit.SECONDS).item();

      assertThat(item).containsEntry("n", n(1));
    }
  }

  /** Runs {@code writes} with no stale reads, so that later writes are the only ones eventual reads lag behind. */
  private void settled(Runnable writes) {
    StrictMoto.table(table).staleReads(1.0, Duration.ZERO).apply();
    writes.run();
    StrictMoto.table(table).staleReads(1.0, LONG_LAG).apply();
  }

  private TransactWriteItemsRequest increment(Map<String, AttributeValue> counter, int by, String token) {
    return TransactWriteItemsRequest.builder()
        .clientRequestToken(token)
        .transactItems(TransactWriteItem.builder().update(u -> u.tableName(table).key(counter)
            .updateExpression("SET n = n + :by").expressionAttributeValues(Map.of(":by", n(by)))).build())
        .build();
  }

  private void put(Map<String, AttributeValue> key, Map<String, AttributeValue> attributes) {
    Map<String, AttributeValue> item = new HashMap<>(key);
    item.putAll(attributes);
    dynamo.putItem(b -> b.tableName(table).item(item)).join();
  }

  private Map<String, AttributeValue> eventualGet(Map<String, AttributeValue> key) {
    return dynamo.getItem(b -> b.tableName(table).key(key)).join().item();
  }

  private Map<String, AttributeValue> consistentGet(Map<String, AttributeValue> key) {
    return dynamo.getItem(b -> b.tableName(table).key(key).consistentRead(true)).join().item();
  }

  private static List<String> linesOf(List<Map<String, AttributeValue>> items) {
    return items.stream().map(item -> item.get(SingleTable.SK).s() + "=" + item.get("n").n()).toList();
  }

  private static Map<String, AttributeValue> key(String pk, String sk) {
    return Map.of(SingleTable.PK, AttributeValue.fromS(pk), SingleTable.SK, AttributeValue.fromS(sk));
  }

  private static AttributeValue n(int value) {
    return AttributeValue.fromN(Integer.toString(value));
  }

  /** What the call failed with, unwrapped from the future's CompletionException. */
  private static Throwable failure(CompletableFuture<?> call) {
    Throwable error = call.handle((response, e) -> e).join();
    assertThat(error).as("the call should fail").isNotNull();
    return unwrap(error);
  }

  private static Throwable unwrap(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
  }
}
