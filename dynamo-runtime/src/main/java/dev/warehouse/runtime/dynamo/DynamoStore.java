package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.InvalidArgumentException;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.routing.Route;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItem;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The data-access layer both services use for the single table: GetItem, paged Query, PutItem and
 * TransactWriteItems (and BatchGetItem, UpdateItem), each through the one retry layer ({@link DynamoCalls}), each failure through
 * the one translation ({@link DynamoErrors}), each request counted under its route's access pattern.
 * Repositories build keys, items and conditions; this class owns how requests are sent.
 *
 * <p>Client request tokens: every {@link #transact} call sends a fresh token, which only that call's
 * own retries reuse. An attempt that committed but answered too late is then applied once, and its
 * retry answers success (DynamoDB's 10-minute token window); a later call (a caller's retry) is a new
 * transaction, which the repositories make idempotent with request records.
 *
 * <p>Metrics of transactions: {@code dynamodb_transaction_duration_seconds} (per call, retries
 * included, with histogram buckets), {@code dynamodb_transaction_attempts} (attempts per call) and
 * {@code dynamodb_transactions_total} by outcome.
 */
public final class DynamoStore {

  /** How a transaction call ended, as the {@code outcome} label. */
  public enum Outcome {
    COMMITTED, IDEMPOTENT_REPLAY, CONDITION_FAILED, CONFLICT, THROTTLED, ERROR;

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final DynamoDbAsyncClient dynamo;
  private final String table;
  private final DynamoCalls calls;
  private final PageTokenCodec pageTokens;
  private final MeterRegistry meters;

  public DynamoStore(DynamoDbAsyncClient dynamo, String table, DynamoCalls calls, PageTokenCodec pageTokens,
      MeterRegistry meters) {
    this.dynamo = dynamo;
    this.table = table;
    this.calls = calls;
    this.pageTokens = pageTokens;
    this.meters = meters;
  }

  /** The table's name, for the requests repositories build. */
  public String table() {
    return table;
  }

  /** GetItem of {@code key} for {@code route}; empty when there is no such item. */
  public <T> CompletableFuture<Optional<T>> get(Route route, TableKey key, boolean consistentRead,
      Function<Map<String, AttributeValue>, T> mapper) {
    GetItemRequest request = GetItemRequest.builder()
        .tableName(table)
        .key(key.attributes())
        .consistentRead(consistentRead)
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .build();
    return calls.run(timeout -> dynamo.getItem(attempt(request, route, timeout)))
        .thenApply(response -> response.hasItem() && !response.item().isEmpty()
            ? Optional.of(mapper.apply(response.item())) : Optional.empty());
  }

  /** PutItem of {@code item} for {@code route}, unconditional (create or replace). */
  public CompletableFuture<Void> put(Route route, Map<String, AttributeValue> item) {
    PutItemRequest request = PutItemRequest.builder()
        .tableName(table)
        .item(item)
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .build();
    return calls.run(timeout -> dynamo.putItem(attempt(request, route, timeout)))
        .thenApply(response -> null);
  }

  /** Rounds of a BatchGetItem that keeps leaving keys unprocessed (throttling), before RESOURCE_EXHAUSTED. */
  static final int BATCH_GET_ROUNDS = 8;

  /**
   * BatchGetItem of {@code keys} (at most 100) for {@code route}: the items found, by key (absent keys
   * have none). Each round goes through the retry layer; keys DynamoDB leaves unprocessed are asked
   * for again after a short backoff, never past the caller's deadline (each round checks it).
   */
  public CompletableFuture<Map<TableKey, Map<String, AttributeValue>>> batchGet(Route route, List<TableKey> keys,
      boolean consistentRead) {
    Map<TableKey, Map<String, AttributeValue>> found = new HashMap<>();
    List<Map<String, AttributeValue>> asked = keys.stream().distinct().map(TableKey::attributes).toList();
    return batchGetRound(route, asked, consistentRead, found, 1).thenApply(done -> found);
  }

  private CompletableFuture<Void> batchGetRound(Route route, List<Map<String, AttributeValue>> keys, boolean consistentRead,
      Map<TableKey, Map<String, AttributeValue>> found, int round) {
    if (keys.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    BatchGetItemRequest request = BatchGetItemRequest.builder()
        .requestItems(Map.of(table, KeysAndAttributes.builder().keys(keys).consistentRead(consistentRead).build()))
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .build();
    return calls.run(timeout -> dynamo.batchGetItem(attempt(request, route, timeout)))
        .thenCompose((BatchGetItemResponse response) -> {
          response.responses().getOrDefault(table, List.of()).forEach(item -> found.put(TableKey.of(item), item));
          List<Map<String, AttributeValue>> left = response.hasUnprocessedKeys() && response.unprocessedKeys().containsKey(table)
              ? response.unprocessedKeys().get(table).keys() : List.of();
          if (left.isEmpty()) {
            return CompletableFuture.completedFuture(null);
          }
          if (round >= BATCH_GET_ROUNDS) {
            return CompletableFuture.failedFuture(new ResourceExhaustedException("DATABASE_THROTTLED",
                "the database kept some keys of a batch read unprocessed; retry later", DynamoErrors.THROTTLED_RETRY_AFTER,
                null));
          }
          // The caller's gRPC context (its deadline) goes with the next round to the timer's thread.
          io.grpc.Context context = io.grpc.Context.current();
          long backoff = DynamoCalls.INITIAL_BACKOFF.toMillis() << Math.min(round - 1, 4);
          CompletableFuture<Void> next = new CompletableFuture<>();
          CompletableFuture.delayedExecutor(ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1),
                  java.util.concurrent.TimeUnit.MILLISECONDS)
              .execute(context.wrap((Runnable) () -> batchGetRound(route, left, consistentRead, found, round + 1)
                  .whenComplete((ok, failure) -> {
                    if (failure == null) {
                      next.complete(null);
                    } else {
                      next.completeExceptionally(failure);
                    }
                  })));
          return next;
        });
  }

  /**
   * TransactGetItems of {@code keys} (at most 100) for {@code route}: one snapshot of them all, as no
   * other read gives it (a product's stock buckets, whose sum must not count a unit being moved twice).
   * The items in the keys' order, an empty map where there is none. A read cancelled by a write in
   * progress is tried again by the retry layer, within the caller's deadline.
   */
  public CompletableFuture<List<Map<String, AttributeValue>>> transactGet(Route route, List<TableKey> keys) {
    TransactGetItemsRequest request = TransactGetItemsRequest.builder()
        .transactItems(keys.stream().map(k -> TransactGetItem.builder().get(g -> g.tableName(table).key(k.attributes())).build())
            .toList())
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .build();
    return calls.run(timeout -> dynamo.transactGetItems(attempt(request, route, timeout)))
        .thenApply(response -> response.responses().stream()
            .map(r -> r.hasItem() && r.item() != null ? r.item() : Map.<String, AttributeValue>of())
            .toList());
  }

  /**
   * One UpdateItem for {@code route} (with its condition, if any): the item as it is afterwards
   * ({@code ReturnValues=ALL_NEW}). A failed condition fails with {@link ConditionFailedException}
   * carrying the item as it was ({@code ReturnValuesOnConditionCheckFailure=ALL_OLD}).
   */
  public CompletableFuture<Map<String, AttributeValue>> update(Route route, UpdateItemRequest update) {
    UpdateItemRequest request = update.toBuilder()
        .tableName(table)
        .returnValues(ReturnValue.ALL_NEW)
        .returnValuesOnConditionCheckFailure(software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure.ALL_OLD)
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .build();
    return calls.run(timeout -> dynamo.updateItem(attempt(request, route, timeout)))
        .thenApply(response -> response.hasAttributes() ? response.attributes() : Map.of());
  }

  /**
   * One page of a Query for {@code route}, with sealed page tokens. It asks for one item more than the
   * page holds: when that item comes back there is a next page, and the token points after the last
   * item returned; when it does not, the list is complete and the token is empty, so callers never
   * fetch a trailing empty page.
   *
   * @param query         the query without Limit and ExclusiveStartKey
   * @param scope         what the token is valid for (route and partition, plus filters)
   * @param keyAttributes the attributes of a continuation key: the table keys, and for an index its keys too
   * @param partition     the key attribute and value every continuation key must carry
   * @return the page; failed with {@link InvalidArgumentException} for a token not issued for this scope
   */
  public <T> CompletableFuture<Page<T>> query(Route route, QueryRequest query, int pageSize, String pageToken,
      String scope, List<String> keyAttributes, Map.Entry<String, String> partition,
      Function<Map<String, AttributeValue>, T> mapper) {
    QueryRequest.Builder builder = pageOf(query, pageSize);
    if (!pageToken.isEmpty()) {
      try {
        builder.exclusiveStartKey(startKey(scope, pageToken, keyAttributes, partition));
      } catch (InvalidArgumentException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    QueryRequest request = builder.build();
    return calls.run(timeout -> dynamo.query(attempt(request, route, timeout)))
        .thenApply(response -> page(response, pageSize, scope, keyAttributes, mapper));
  }

  /**
   * One page of a fanned-out Query (a route on write shards): one Query per shard, all at once, merged
   * in sort-key order by {@link ShardedPage}, which says where every shard resumes; the page token seals
   * that, and stays the same size whatever the shard count. An empty token means every shard is done.
   * A shard that fails fails the page: no partial page is returned as complete.
   *
   * @param shards the Query of every shard, in shard order, without Limit and ExclusiveStartKey (table keys PK, SK)
   * @param scope  what the token is valid for; it must name the shard count
   * @return the page; failed with {@link InvalidArgumentException} for a token not issued for this scope
   */
  public <T> CompletableFuture<Page<T>> queryShards(Route route, List<QueryRequest> shards, int pageSize, String pageToken,
      String scope, Function<Map<String, AttributeValue>, T> mapper) {
    return queryShards(route, ShardKeys.TABLE, shards, pageSize, pageToken, scope, mapper);
  }

  /**
   * The key attributes of a fanned-out Query: its partition and sort key (the table's, or an index's),
   * and for an index the table's keys too, which DynamoDB needs in a continuation key. Sort keys must
   * be unique across shards (they end with the item's id), so one sort key says where every shard resumes.
   */
  public record ShardKeys(String partition, String sort, List<String> tableKeys) {

    /** A Query of the table itself. */
    public static final ShardKeys TABLE = new ShardKeys(SingleTable.PK, SingleTable.SK, List.of());
    /** A Query of GSI1. */
    public static final ShardKeys GSI1 = new ShardKeys(SingleTable.GSI1_PK, SingleTable.GSI1_SK,
        List.of(SingleTable.PK, SingleTable.SK));

    public ShardKeys {
      tableKeys = List.copyOf(tableKeys);
    }
  }

  /**
   * {@link #queryShards(Route, List, int, String, String, Function)} on the keys {@code keys} names
   * (an index's): each shard's Query is on {@code keys.partition()} = {@code :pk}.
   */
  public <T> CompletableFuture<Page<T>> queryShards(Route route, ShardKeys keys, List<QueryRequest> shards, int pageSize,
      String pageToken, String scope, Function<Map<String, AttributeValue>, T> mapper) {
    ShardedPage position = ShardedPage.first(keys, shards.size());
    if (!pageToken.isEmpty()) {
      Optional<ShardedPage> resumed;
      try {
        resumed = ShardedPage.resume(keys, shards.size(), pageTokens.decode(scope, pageToken));
      } catch (InvalidArgumentException e) {
        return CompletableFuture.failedFuture(e);
      }
      if (resumed.isEmpty()) {
        return CompletableFuture.failedFuture(foreignToken());
      }
      position = resumed.get();
    }
    List<CompletableFuture<QueryResponse>> answers = new java.util.ArrayList<>();
    for (int i = 0; i < shards.size(); i++) {
      if (position.done(i)) {
        answers.add(CompletableFuture.completedFuture(null));
        continue;
      }
      QueryRequest.Builder builder = pageOf(shards.get(i), pageSize);
      position.startKey(shards.get(i)).ifPresent(builder::exclusiveStartKey);
      QueryRequest request = builder.build();
      answers.add(calls.run(timeout -> dynamo.query(attempt(request, route, timeout))));
    }
    ShardedPage from = position;
    return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
        .thenApply(all -> {
          ShardedPage.Merged<T> merged = from.merge(answers.stream().map(CompletableFuture::join).toList(), pageSize, mapper);
          return new Page<>(merged.items(), merged.next().map(state -> pageTokens.encode(scope, state)).orElse(""));
        });
  }

  /**
   * One TransactWriteItems of {@code items} for {@code route}, sent with a client request token of its
   * own. Fails with {@link ConditionFailedException} when a condition failed (the repository says what
   * that means), or with the domain error of any other failure once retries are over.
   *
   * @param isReplay for a failed condition, whether it was an idempotent replay (for the outcome metric only)
   */
  public CompletableFuture<Void> transact(String operation, Route route, List<TransactWriteItem> items,
      Predicate<ConditionFailedException> isReplay) {
    TransactWriteItemsRequest request = TransactWriteItemsRequest.builder()
        .transactItems(items)
        .clientRequestToken(newToken())
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .build();
    AtomicInteger attempts = new AtomicInteger();
    Timer.Sample sample = Timer.start(meters);
    return calls.run(timeout -> {
          attempts.incrementAndGet();
          CompletableFuture<software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsResponse> sent =
              dynamo.transactWriteItems(attempt(request, route, timeout));
          sent.whenComplete((ok, failure) -> {
            if (failure != null && isConflict(failure)) {
              Counter.builder("dynamodb.transaction.conflicts")
                  .description("attempts of transactions cancelled by a conflicting transaction (each is retried while time is left)")
                  .tags("operation", operation)
                  .register(meters)
                  .increment();
            }
          });
          return sent;
        })
        .handle((ok, failure) -> {
          RuntimeException error = failure == null ? null : DynamoErrors.translate(failure);
          Outcome outcome = error == null ? Outcome.COMMITTED : outcome(error, isReplay);
          sample.stop(Timer.builder("dynamodb.transaction.duration")
              .description("TransactWriteItems calls, retries included")
              .tags("operation", operation, "outcome", outcome.label())
              .register(meters));
          DistributionSummary.builder("dynamodb.transaction.attempts")
              .description("attempts per transaction call")
              .tags("operation", operation)
              .register(meters)
              .record(attempts.get());
          Counter.builder("dynamodb.transactions")
              .description("transaction calls by outcome")
              .tags("operation", operation, "outcome", outcome.label())
              .register(meters)
              .increment();
          if (error != null) {
            throw error;
          }
          return null;
        });
  }

  private static Outcome outcome(RuntimeException failure, Predicate<ConditionFailedException> isReplay) {
    if (failure instanceof ConditionFailedException condition) {
      return isReplay.test(condition) ? Outcome.IDEMPOTENT_REPLAY : Outcome.CONDITION_FAILED;
    }
    if (failure instanceof AbortedException aborted && aborted.reason().equals("TRANSACTION_CONFLICT")) {
      return Outcome.CONFLICT;
    }
    if (failure instanceof ResourceExhaustedException exhausted && exhausted.reason().equals("DATABASE_THROTTLED")) {
      return Outcome.THROTTLED;
    }
    return Outcome.ERROR;
  }

  /** Whether an attempt failed because another transaction touched one of its items meanwhile. */
  private static boolean isConflict(Throwable failure) {
    Throwable cause = dev.warehouse.runtime.error.Failures.cause(failure);
    if (cause instanceof software.amazon.awssdk.services.dynamodb.model.TransactionConflictException) {
      return true;
    }
    return cause instanceof TransactionCanceledException cancelled && cancelled.hasCancellationReasons()
        && cancelled.cancellationReasons().stream().anyMatch(r -> "TransactionConflict".equals(r.code()));
  }

  /** A token unique to one transaction call (at most 36 characters, as DynamoDB allows). */
  private static String newToken() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    return new UUID(random.nextLong(), random.nextLong()).toString();
  }

  /** {@code request} as one attempt sends it: with its timeout, and the access pattern its metrics are counted under. */
  @SuppressWarnings("unchecked") // toBuilder().build() gives back a request of the same class
  private static <Q extends DynamoDbRequest> Q attempt(Q request, Route route, Duration timeout) {
    return (Q) request.toBuilder()
        .overrideConfiguration(o -> o.apiCallAttemptTimeout(timeout).putExecutionAttribute(DynamoMetrics.ACCESS_PATTERN,
            route.patternId()))
        .build();
  }

  /** A page's Query: on the table, one item more than the page holds, with its consumed capacity. */
  private QueryRequest.Builder pageOf(QueryRequest query, int pageSize) {
    return query.toBuilder().tableName(table).limit(pageSize + 1).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
  }

  private static InvalidArgumentException foreignToken() {
    // Unreachable without our key: tokens are sealed per scope. Checked anyway, never trusted.
    return InvalidArgumentException.of("page_token", "is not a page token issued for this request");
  }

  private Map<String, AttributeValue> startKey(String scope, String pageToken, List<String> keyAttributes,
      Map.Entry<String, String> partition) {
    Map<String, String> key = pageTokens.decode(scope, pageToken);
    if (!key.keySet().equals(Set.copyOf(keyAttributes)) || !partition.getValue().equals(key.get(partition.getKey()))) {
      throw foreignToken();
    }
    Map<String, AttributeValue> start = new HashMap<>();
    key.forEach((name, value) -> start.put(name, AttributeValue.fromS(value)));
    return start;
  }

  private <T> Page<T> page(QueryResponse response, int pageSize, String scope, List<String> keyAttributes,
      Function<Map<String, AttributeValue>, T> mapper) {
    List<Map<String, AttributeValue>> items = response.items();
    if (items.size() > pageSize) {
      List<Map<String, AttributeValue>> page = items.subList(0, pageSize);
      return new Page<>(page.stream().map(mapper).toList(), token(scope, keyAttributes, page.get(pageSize - 1)));
    }
    String next = response.hasLastEvaluatedKey() && !response.lastEvaluatedKey().isEmpty()
        ? token(scope, keyAttributes, response.lastEvaluatedKey()) : "";
    return new Page<>(items.stream().map(mapper).toList(), next);
  }

  private String token(String scope, List<String> keyAttributes, Map<String, AttributeValue> item) {
    Map<String, String> key = new LinkedHashMap<>();
    for (String name : keyAttributes) {
      key.put(name, item.get(name).s());
    }
    return pageTokens.encode(scope, key);
  }
}
