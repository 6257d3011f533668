package dev.warehouse.runtime.audit;

import static dev.warehouse.runtime.dynamo.SingleTable.PK;
import static dev.warehouse.runtime.dynamo.SingleTable.SK;

import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * How an audit reads the table: a parallel Scan (one worker per segment) and strongly consistent
 * batch reads, every page of either paced by one resilience4j rate limiter, so an audit never takes
 * more of the table's capacity than {@code --pages-per-second} allows. A tool's reads, not a request
 * handler's: every method blocks.
 */
public final class PacedScan {

  /**
   * The DynamoDB operations an audit sends, all reads of the base table, never of an index: the audits'
   * IAM policy ({@code deploy/aws/iam/audit.json}) is generated from this list and allows nothing else.
   */
  public static final List<String> OPERATIONS = List.of("Scan", "BatchGetItem", "GetItem");

  /** Items per Scan page. */
  static final int PAGE_ITEMS = 100;
  /** Keys per BatchGetItem, DynamoDB's limit. */
  static final int BATCH_GET_LIMIT = 100;

  /**
   * An audit's arguments.
   *
   * @param segments       parallel Scan segments, one worker each
   * @param pagesPerSecond most Scan and BatchGetItem pages per second, all segments together
   */
  public record Options(int segments, int pagesPerSecond) {

    public static final int DEFAULT_SEGMENTS = 4;
    public static final int DEFAULT_PAGES_PER_SECOND = 20;

    public Options {
      if (segments < 1 || pagesPerSecond < 1) {
        throw new IllegalArgumentException("values must be positive");
      }
    }

    /**
     * Reads {@code [--segments N] [--pages-per-second N]}.
     *
     * @throws IllegalArgumentException for an unknown option, a missing or malformed value, or one below 1
     */
    public static Options parse(String[] args) {
      int segments = DEFAULT_SEGMENTS;
      int pagesPerSecond = DEFAULT_PAGES_PER_SECOND;
      for (int i = 0; i < args.length; i += 2) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(args[i] + " needs a value");
        }
        int value = Integer.parseInt(args[i + 1]); // NumberFormatException is an IllegalArgumentException
        switch (args[i]) {
          case "--segments" -> segments = value;
          case "--pages-per-second" -> pagesPerSecond = value;
          default -> throw new IllegalArgumentException(args[i]);
        }
      }
      return new Options(segments, pagesPerSecond);
    }
  }

  private final DynamoDbAsyncClient dynamo;
  private final String table;
  private final int segments;
  private final RateLimiter pages;

  /** @param name names the rate limiter, e.g. {@code order-audit} */
  public PacedScan(DynamoDbAsyncClient dynamo, String table, String name, Options options) {
    this.dynamo = dynamo;
    this.table = table;
    this.segments = options.segments();
    this.pages = RateLimiter.of(name, RateLimiterConfig.custom()
        .limitForPeriod(options.pagesPerSecond())
        .limitRefreshPeriod(Duration.ofSeconds(1))
        .timeoutDuration(Duration.ofMinutes(10))
        .build());
  }

  /**
   * Walks the whole table, one worker per segment, and hands each page's items whose {@code entity} is
   * one of {@code entities} to {@code onPage}, on that segment's worker (so from several threads at
   * once). Returns when every segment is done.
   *
   * @throws CompletionException with the first failure of any segment, which ends every segment: the
   *     others would only scan on towards no verdict
   */
  public void scan(List<String> entities, Consumer<List<Map<String, AttributeValue>>> onPage) {
    Map<String, AttributeValue> values = new LinkedHashMap<>();
    for (String entity : entities) {
      values.put(":e" + values.size(), AttributeValue.fromS(entity));
    }
    ScanRequest filtered = ScanRequest.builder()
        .tableName(table)
        .totalSegments(segments)
        .limit(PAGE_ITEMS)
        .filterExpression("#entity IN (" + String.join(", ", values.keySet()) + ")")
        .expressionAttributeNames(Map.of("#entity", "entity"))
        .expressionAttributeValues(values)
        .build();
    ExecutorService workers = Executors.newFixedThreadPool(segments);
    try {
      List<CompletableFuture<Void>> running = new ArrayList<>();
      for (int segment = 0; segment < segments; segment++) {
        ScanRequest first = filtered.toBuilder().segment(segment).build();
        running.add(CompletableFuture.runAsync(() -> scanSegment(first, onPage), workers));
      }
      CompletableFuture<Void> firstFailure = new CompletableFuture<>();
      running.forEach(segment -> segment.whenComplete((done, failure) -> {
        if (failure != null) {
          firstFailure.completeExceptionally(failure);
        }
      }));
      CompletableFuture.anyOf(CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)), firstFailure).join();
    } finally {
      workers.shutdownNow();
    }
  }

  private void scanSegment(ScanRequest first, Consumer<List<Map<String, AttributeValue>>> onPage) {
    Map<String, AttributeValue> start = null;
    do {
      pages.acquirePermission();
      ScanRequest request = start == null ? first : first.toBuilder().exclusiveStartKey(start).build();
      ScanResponse page = dynamo.scan(request).join();
      onPage.accept(page.items());
      start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
    } while (start != null);
  }

  /**
   * Reads the items of {@code keys} strongly (BatchGetItem, 100 keys a page, each page paced, repeated
   * keys read once, unprocessed keys asked again), by {@link #keyText}; an absent item has no entry.
   */
  public Map<String, Map<String, AttributeValue>> batchGet(Collection<Map<String, AttributeValue>> keys) {
    Map<String, Map<String, AttributeValue>> distinct = new LinkedHashMap<>();
    keys.forEach(key -> distinct.putIfAbsent(keyText(key), key));
    List<Map<String, AttributeValue>> unique = List.copyOf(distinct.values());
    Map<String, Map<String, AttributeValue>> found = new HashMap<>();
    for (int from = 0; from < unique.size(); from += BATCH_GET_LIMIT) {
      List<Map<String, AttributeValue>> batch = unique.subList(from, Math.min(unique.size(), from + BATCH_GET_LIMIT));
      Map<String, KeysAndAttributes> pending = Map.of(table, KeysAndAttributes.builder().keys(batch).consistentRead(true).build());
      while (!pending.isEmpty() && !pending.get(table).keys().isEmpty()) {
        pages.acquirePermission();
        Map<String, KeysAndAttributes> request = pending;
        var response = dynamo.batchGetItem(b -> b.requestItems(request)).join();
        response.responses().getOrDefault(table, List.of()).forEach(item -> found.put(keyText(item), item));
        pending = response.hasUnprocessedKeys() && response.unprocessedKeys().containsKey(table)
            ? response.unprocessedKeys() : Map.of();
      }
    }
    return found;
  }

  /** Reads one item strongly (GetItem); null when it is absent. */
  public Map<String, AttributeValue> get(Map<String, AttributeValue> key) {
    Map<String, AttributeValue> keyOnly = Map.of(PK, key.get(PK), SK, key.get(SK));
    var response = dynamo.getItem(b -> b.tableName(table).key(keyOnly).consistentRead(true)).join();
    return response.hasItem() && !response.item().isEmpty() ? response.item() : null;
  }

  /** An item's (or a key's) primary key as one string, to look items up by. */
  public static String keyText(Map<String, AttributeValue> item) {
    return item.get(PK).s() + "\n" + item.get(SK).s();
  }
}
