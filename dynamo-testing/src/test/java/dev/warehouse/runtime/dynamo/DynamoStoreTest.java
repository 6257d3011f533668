package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.routing.v1.Consistency;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.InvalidArgumentException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.routing.KeyTemplate;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.testing.Patience;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The data-access layer against the strict launcher: round trips of each operation, what a failed
 * condition and a conflicted transaction become, reads with and without ConsistentRead as the
 * launcher models them, a transaction applied once though its first answer came too late, and paging
 * (one partition, and a route on write shards) with sealed page tokens. Each test has a table of its
 * own, with the launcher's settings it needs.
 */
@Tag("integration")
class DynamoStoreTest {

  /** A lag no test outlasts: reads made right after a write fall within it however slow the machine. */
  private static final Duration LONG_LAG = Duration.ofSeconds(5);
  private static final PageTokenCodec TOKENS = new PageTokenCodec(TestServices.PAGE_TOKEN_KEY);
  private static final Route ROUTE = new Route("test.v1.Store/Call", "T1", "call",
      List.of(Operation.OPERATION_QUERY), Optional.empty(), KeyTemplate.parse("ITEMS#{id}"), KeyTemplate.parse("ITEM#{n}"),
      List.of(), Consistency.CONSISTENCY_STRONG_ALLOWED, "low", List.of(), List.of(), Optional.empty());

  private static DynamoDbAsyncClient dynamo;
  private static ScheduledExecutorService scheduler;
  private String table;
  private SimpleMeterRegistry meters;
  private DynamoStore store;

  @BeforeAll
  static void client() {
    dynamo = DynamoClients.create(TestServices.config("dynamo-store-test", "unused"), List.of());
    scheduler = Executors.newSingleThreadScheduledExecutor();
  }

  @AfterAll
  static void close() {
    if (dynamo != null) {
      dynamo.close();
    }
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
  }

  @BeforeEach
  void createTable() {
    table = TestServices.uniqueTableName();
    TableSetup.ensureTable(dynamo, table, Duration.ofMinutes(1));
    meters = new SimpleMeterRegistry();
    store = store(dynamo, Patience.STEP);
  }

  @AfterEach
  void resetTable() {
    StrictMoto.reset(table);
  }

  // GetItem and PutItem

  @Test
  void put_thenConsistentGet_returnsTheItem_andAnAbsentKeyIsEmpty() {
    TableKey key = new TableKey("ITEMS#a", "ITEM#1");
    store.put(ROUTE, item(key, Map.of("colour", s("red")))).join();

    assertThat(store.get(ROUTE, key, true, m -> m.get("colour").s()).join()).contains("red");
    assertThat(store.get(ROUTE, new TableKey("ITEMS#a", "ITEM#2"), true, m -> m).join()).isEmpty();
  }

  @Test
  void put_replacesTheWholeItem() {
    TableKey key = new TableKey("ITEMS#a", "ITEM#1");
    store.put(ROUTE, item(key, Map.of("colour", s("red"), "size", s("L")))).join();
    store.put(ROUTE, item(key, Map.of("colour", s("blue")))).join();

    assertThat(store.get(ROUTE, key, true, m -> m).join()).hasValueSatisfying(stored -> {
      assertThat(stored).containsEntry("colour", s("blue"));
      assertThat(stored).doesNotContainKey("size");
    });
  }

  @Test
  void eventualGet_rightAfterAPut_seesTheTableAsItWas_whileAConsistentGetSeesThePut() {
    StrictMoto.table(table).staleReads(1.0, LONG_LAG).apply();
    TableKey key = new TableKey("ITEMS#a", "ITEM#1");
    store.put(ROUTE, item(key, Map.of("colour", s("red")))).join();

    // The store must pass ConsistentRead through: without it, an item just written is not there yet.
    assertThat(store.get(ROUTE, key, false, m -> m).join()).isEmpty();
    assertThat(store.get(ROUTE, key, true, m -> m).join()).isPresent();
  }

  @Test
  void batchGet_returnsTheItemsFound_byKey() {
    TableKey one = new TableKey("ITEMS#a", "ITEM#1");
    TableKey two = new TableKey("ITEMS#b", "ITEM#2");
    store.put(ROUTE, item(one, Map.of("colour", s("red")))).join();
    store.put(ROUTE, item(two, Map.of("colour", s("blue")))).join();

    Map<TableKey, Map<String, AttributeValue>> found =
        store.batchGet(ROUTE, List.of(one, two, new TableKey("ITEMS#c", "ITEM#3"), one), true).join();

    assertThat(found).containsOnlyKeys(one, two);
    assertThat(found.get(two)).containsEntry("colour", s("blue"));
  }

  // Conditional writes

  @Test
  void update_returnsTheItemAsItIsAfterwards() {
    TableKey key = new TableKey("ITEMS#a", "ITEM#1");
    store.put(ROUTE, item(key, Map.of("qty", n(3)))).join();

    Map<String, AttributeValue> after = store.update(ROUTE, take(key, 2)).join();

    assertThat(after).containsEntry("qty", n(1)).containsEntry("PK", s("ITEMS#a"));
  }

  @Test
  void update_whoseConditionFails_isAFailedPrecondition_carryingTheItemAsItWas() {
    TableKey key = new TableKey("ITEMS#a", "ITEM#1");
    store.put(ROUTE, item(key, Map.of("qty", n(3)))).join();

    Throwable failure = failure(store.update(ROUTE, take(key, 5)));

    assertThat(failure).isInstanceOf(ConditionFailedException.class);
    assertThat(((ConditionFailedException) failure).item(0)).containsEntry("qty", n(3));
    assertThat(GrpcErrors.toStatusException(failure).getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(store.get(ROUTE, key, true, m -> m.get("qty")).join()).contains(n(3));
  }

  @Test
  void transact_writesEveryItem() {
    TableKey first = new TableKey("ITEMS#a", "ITEM#1");
    TableKey second = new TableKey("ITEMS#b", "ITEM#1");

    store.transact("create", ROUTE, List.of(create(first), create(second)), condition -> false).join();

    assertThat(store.get(ROUTE, first, true, m -> m).join()).isPresent();
    assertThat(store.get(ROUTE, second, true, m -> m).join()).isPresent();
    assertThat(meters.counter("dynamodb.transactions", "operation", "create", "outcome", "committed").count()).isEqualTo(1);
    assertThat(meters.summary("dynamodb.transaction.attempts", "operation", "create").totalAmount()).isEqualTo(1);
  }

  @Test
  void transact_whoseItemsConditionFails_writesNothing_andSaysWhichItemFailed_withItsOldImage() {
    TableKey fresh = new TableKey("ITEMS#a", "ITEM#1");
    TableKey taken = new TableKey("ITEMS#b", "ITEM#1");
    store.put(ROUTE, item(taken, Map.of("owner", s("first")))).join();

    Throwable failure = failure(store.transact("create", ROUTE, List.of(create(fresh), create(taken)), condition -> false));

    assertThat(failure).isInstanceOf(ConditionFailedException.class);
    ConditionFailedException condition = (ConditionFailedException) failure;
    assertThat(condition.failed(0)).isFalse();
    assertThat(condition.failed(1)).isTrue();
    assertThat(condition.item(1)).containsEntry("owner", s("first"));
    assertThat(store.get(ROUTE, fresh, true, m -> m).join()).as("all or nothing").isEmpty();
    assertThat(meters.counter("dynamodb.transactions", "operation", "create", "outcome", "condition_failed").count())
        .isEqualTo(1);
  }

  @Test
  void transact_whoseFailedConditionIsAReplay_isCountedAsOne() {
    TableKey taken = new TableKey("ITEMS#b", "ITEM#1");
    store.put(ROUTE, item(taken, Map.of("owner", s("first")))).join();

    failure(store.transact("create", ROUTE, List.of(create(taken)),
        condition -> condition.item(0).get("owner").equals(s("first"))));

    assertThat(meters.counter("dynamodb.transactions", "operation", "create", "outcome", "idempotent_replay").count())
        .isEqualTo(1);
  }

  @Test
  void transact_conflictedOnEveryAttempt_isRetriedToTheLimit_thenAborted_writingNothing() {
    StrictMoto.table(table).conflictRate(1.0).apply();
    TableKey key = new TableKey("ITEMS#a", "ITEM#1");

    Throwable failure = failure(store.transact("create", ROUTE, List.of(create(key)), condition -> false));

    assertThat(failure).isInstanceOf(AbortedException.class);
    assertThat(((AbortedException) failure).reason()).isEqualTo("TRANSACTION_CONFLICT");
    assertThat(meters.counter("dynamodb.transaction.conflicts", "operation", "create").count())
        .isEqualTo(DynamoCalls.MAX_ATTEMPTS);
    assertThat(meters.summary("dynamodb.transaction.attempts", "operation", "create").max())
        .isEqualTo(DynamoCalls.MAX_ATTEMPTS);
    assertThat(meters.counter("dynamodb.transactions", "operation", "create", "outcome", "conflict").count()).isEqualTo(1);
    assertThat(store.get(ROUTE, key, true, m -> m).join()).isEmpty();
  }

  @Test
  void transact_eachCallIsATransactionOfItsOwn_evenWithTheSameItems() {
    TableKey counter = new TableKey("ITEMS#a", "COUNTER");
    store.put(ROUTE, item(counter, Map.of("n", n(0)))).join();

    store.transact("increment", ROUTE, List.of(increment(counter)), condition -> false).join();
    store.transact("increment", ROUTE, List.of(increment(counter)), condition -> false).join();

    // A fresh client request token per call: the launcher, which remembers tokens, applies both.
    assertThat(store.get(ROUTE, counter, true, m -> m.get("n")).join()).contains(n(2));
  }

  @Test
  void transact_whoseFirstAttemptWasAppliedButAnsweredTooLate_isAppliedOnce_andCommits() {
    TableKey counter = new TableKey("ITEMS#a", "COUNTER");
    store.put(ROUTE, item(counter, Map.of("n", n(0)))).join();
    try (DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint());
        DynamoDbAsyncClient viaProxy = DynamoClients.create(
            TestServices.config("dynamo-store-test", table, proxy.endpoint(), Patience.STEP), List.of())) {
      // Attempts of 2 s each; the first is applied at once and answered after 10 s, long after it timed out.
      DynamoStore late = store(viaProxy, Duration.ofSeconds(8));
      proxy.answerLate("TransactWriteItems", Duration.ofSeconds(10), 1);

      late.transact("increment", ROUTE, List.of(increment(counter)), condition -> false).join();

      // Its retry carried the same token, which the launcher answered as done without applying it again.
      assertThat(proxy.calls("TransactWriteItems")).isGreaterThanOrEqualTo(2);
      assertThat(meters.counter("dynamodb.transactions", "operation", "increment", "outcome", "committed").count())
          .isEqualTo(1);
    }
    assertThat(store.get(ROUTE, counter, true, m -> m.get("n")).join()).contains(n(1));
  }

  // Query, with sealed page tokens

  @Test
  void query_pagesThroughOnePartition_inKeyOrder_endingWithAnEmptyToken() {
    for (int i = 1; i <= 5; i++) {
      store.put(ROUTE, item(new TableKey("ITEMS#a", "ITEM#" + i), Map.of())).join();
    }
    store.put(ROUTE, item(new TableKey("ITEMS#b", "ITEM#0"), Map.of())).join();

    List<Page<String>> pages = pages(2, token -> query("ITEMS#a", 2, token, "T1|ITEMS#a"));

    assertThat(pages).extracting(Page::items)
        .containsExactly(List.of("ITEM#1", "ITEM#2"), List.of("ITEM#3", "ITEM#4"), List.of("ITEM#5"));
    assertThat(pages.get(2).nextPageToken()).isEmpty();
  }

  @Test
  void query_whosePartitionEndsWithAFullPage_hasNoTrailingEmptyPage() {
    for (int i = 1; i <= 4; i++) {
      store.put(ROUTE, item(new TableKey("ITEMS#a", "ITEM#" + i), Map.of())).join();
    }

    List<Page<String>> pages = pages(2, token -> query("ITEMS#a", 2, token, "T1|ITEMS#a"));

    assertThat(pages).extracting(Page::items).containsExactly(List.of("ITEM#1", "ITEM#2"), List.of("ITEM#3", "ITEM#4"));
  }

  @Test
  void queryToken_isOpaque_andRefusedForAnotherScope_orAnotherPartition() {
    for (int i = 1; i <= 3; i++) {
      store.put(ROUTE, item(new TableKey("ITEMS#a", "ITEM#" + i), Map.of())).join();
    }
    String token = query("ITEMS#a", 1, "", "T1|ITEMS#a").join().nextPageToken();

    String decoded = new String(Base64.getUrlDecoder().decode(token),
        StandardCharsets.ISO_8859_1);
    assertThat(decoded).doesNotContain("ITEM#1").doesNotContain("ITEMS#a");
    assertInvalidPageToken(query("ITEMS#a", 1, token, "T1|ITEMS#b"));
    // The store checks the partition itself too, whatever a repository puts in the scope.
    assertInvalidPageToken(query("ITEMS#b", 1, token, "T1|ITEMS#a"));
  }

  @Test
  void queryOnGsi1_pagesWithTheIndexKeysAndTheTableKeys() {
    StrictMoto.table(table).staleReads(0.0, Duration.ZERO).apply();
    for (int i = 1; i <= 5; i++) {
      Map<String, AttributeValue> extra = Map.of(SingleTable.GSI1_PK, s("BY#w"), SingleTable.GSI1_SK, s("AT#" + i));
      store.put(ROUTE, item(new TableKey("ITEMS#" + i, "METADATA"), extra)).join();
    }
    QueryRequest byIndex = QueryRequest.builder().indexName(SingleTable.GSI1)
        .keyConditionExpression("#pk = :pk")
        .expressionAttributeNames(Map.of("#pk", SingleTable.GSI1_PK))
        .expressionAttributeValues(Map.of(":pk", s("BY#w"))).build();

    List<Page<String>> pages = pages(2, token -> store.query(ROUTE, byIndex, 2, token, "T1|BY#w",
        List.of(SingleTable.GSI1_PK, SingleTable.GSI1_SK, SingleTable.PK, SingleTable.SK),
        Map.entry(SingleTable.GSI1_PK, "BY#w"), m -> m.get(SingleTable.GSI1_SK).s()));

    assertThat(pages.stream().flatMap(p -> p.items().stream()).toList()).containsExactly("AT#1", "AT#2", "AT#3", "AT#4", "AT#5");
  }

  // A route on write shards

  @Test
  void queryShards_pagesThroughEveryShard_inSortKeyOrder() {
    int shards = 4;
    List<String> written = new ArrayList<>();
    // Uneven on purpose: shard 3 stays empty, shard 0 holds most.
    int[] shardOf = {0, 0, 1, 0, 2, 0, 1, 0, 0, 2, 0};
    for (int i = 0; i < shardOf.length; i++) {
      String sortKey = String.format("LOW#%03d#p%d", (i * 37) % 100, i);
      store.put(ROUTE, item(new TableKey("SHARD#" + shardOf[i], sortKey), Map.of())).join();
      written.add(sortKey);
    }
    List<QueryRequest> queries = IntStream.range(0, shards).mapToObj(shard -> QueryRequest.builder()
        .keyConditionExpression("#pk = :pk").expressionAttributeNames(Map.of("#pk", SingleTable.PK))
        .expressionAttributeValues(Map.of(":pk", s("SHARD#" + shard))).consistentRead(true).build()).toList();

    List<Page<String>> pages = pages(3, token -> store.queryShards(ROUTE, queries, 3, token, "T1|shards=4",
        m -> m.get(SingleTable.SK).s()));

    assertThat(pages.stream().flatMap(p -> p.items().stream()).toList())
        .isEqualTo(written.stream().sorted().toList());
    assertThat(pages.subList(0, pages.size() - 1)).allSatisfy(page -> assertThat(page.items()).hasSize(3));
    assertThat(pages.get(pages.size() - 1).items()).isNotEmpty();
  }

  @Test
  void queryShardsOnGsi1_resumesEveryShard_withTheLastItemsTableKeys() {
    StrictMoto.table(table).staleReads(0.0, Duration.ZERO).apply();
    int shards = 3;
    List<String> written = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      String sortKey = String.format("HOLD#%03d#r%d", (i * 41) % 100, i);
      Map<String, AttributeValue> extra = Map.of(SingleTable.GSI1_PK, s("HOLDS#" + (i % shards)), SingleTable.GSI1_SK, s(sortKey));
      store.put(ROUTE, item(new TableKey("RESERVATION#" + i, "METADATA"), extra)).join();
      written.add(sortKey);
    }
    List<QueryRequest> queries = IntStream.range(0, shards).mapToObj(shard -> QueryRequest.builder()
        .indexName(SingleTable.GSI1)
        .keyConditionExpression("#pk = :pk").expressionAttributeNames(Map.of("#pk", SingleTable.GSI1_PK))
        .expressionAttributeValues(Map.of(":pk", s("HOLDS#" + shard))).build()).toList();

    List<Page<String>> pages = pages(2, token -> store.queryShards(ROUTE, DynamoStore.ShardKeys.GSI1, queries, 2, token,
        "T1|shards=3", m -> m.get(SingleTable.GSI1_SK).s()));

    assertThat(pages.stream().flatMap(p -> p.items().stream()).toList()).isEqualTo(written.stream().sorted().toList());
  }

  // Helpers

  private DynamoStore store(DynamoDbAsyncClient client, Duration operationTimeout) {
    // The retry layer's own meters are DynamoCallsTest's: a registry of its own keeps them from clashing here.
    return new DynamoStore(client, table, new DynamoCalls(scheduler, new SimpleMeterRegistry(), operationTimeout), TOKENS,
        meters);
  }

  private CompletableFuture<Page<String>> query(String partition, int pageSize, String token, String scope) {
    QueryRequest query = QueryRequest.builder().keyConditionExpression("#pk = :pk")
        .expressionAttributeNames(Map.of("#pk", SingleTable.PK))
        .expressionAttributeValues(Map.of(":pk", s(partition))).consistentRead(true).build();
    return store.query(ROUTE, query, pageSize, token, scope, List.of(SingleTable.PK, SingleTable.SK),
        Map.entry(SingleTable.PK, partition), m -> m.get(SingleTable.SK).s());
  }

  /** Every page of a listing, following its tokens; fails if it does not end. */
  private static List<Page<String>> pages(int pageSize, Function<String, CompletableFuture<Page<String>>> list) {
    List<Page<String>> pages = new ArrayList<>();
    String token = "";
    do {
      Page<String> page = list.apply(token).join();
      assertThat(page.items()).hasSizeLessThanOrEqualTo(pageSize);
      pages.add(page);
      token = page.nextPageToken();
      assertThat(pages).as("a listing that ends").hasSizeLessThan(50);
    } while (!token.isEmpty());
    return pages;
  }

  private static void assertInvalidPageToken(CompletableFuture<?> result) {
    Throwable failure = failure(result);
    assertThat(failure).isInstanceOf(InvalidArgumentException.class);
    assertThat(((InvalidArgumentException) failure).violations()).singleElement()
        .satisfies(violation -> assertThat(violation.toString()).contains("page_token"));
  }

  private static Throwable failure(CompletableFuture<?> result) {
    return Failures.cause(result.handle((value, failure) -> {
      assertThat(failure).as("the call failed").isNotNull();
      return failure;
    }).join());
  }

  private TransactWriteItem create(TableKey key) {
    return TransactWriteItem.builder().put(p -> p.tableName(table).item(item(key, Map.of("owner", s("second"))))
        .conditionExpression("attribute_not_exists(#pk)").expressionAttributeNames(Map.of("#pk", SingleTable.PK))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)).build();
  }

  private TransactWriteItem increment(TableKey key) {
    return TransactWriteItem.builder().update(u -> u.tableName(table).key(key.attributes())
        .updateExpression("SET #n = #n + :one").expressionAttributeNames(Map.of("#n", "n"))
        .expressionAttributeValues(Map.of(":one", n(1)))).build();
  }

  private static UpdateItemRequest take(TableKey key, int units) {
    return UpdateItemRequest.builder().key(key.attributes())
        .updateExpression("SET #q = #q - :n").conditionExpression("#q >= :n")
        .expressionAttributeNames(Map.of("#q", "qty")).expressionAttributeValues(Map.of(":n", n(units))).build();
  }

  private static Map<String, AttributeValue> item(TableKey key, Map<String, AttributeValue> attributes) {
    Map<String, AttributeValue> item = new HashMap<>(key.attributes());
    item.putAll(attributes);
    return item;
  }

  private static AttributeValue s(String value) {
    return AttributeValue.fromS(value);
  }

  private static AttributeValue n(long value) {
    return AttributeValue.fromN(Long.toString(value));
  }
}
