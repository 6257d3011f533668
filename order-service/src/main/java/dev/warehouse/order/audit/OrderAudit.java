package dev.warehouse.order.audit;

import static dev.warehouse.runtime.dynamo.SingleTable.PK;
import static dev.warehouse.runtime.dynamo.SingleTable.SK;

import dev.warehouse.order.store.OrderItems;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoClients;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.RequestNotPermitted;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * The consistency audit: an admin tool, off the request path, that walks every order and reports each
 * order whose two copies disagree or lack one another. It scans the table in parallel segments,
 * paced by a rate limiter, and for each page of copies batch-reads their twins. A disagreement is
 * read again, strongly, before it is reported, so an update landing mid-audit is not a finding.
 */
public final class OrderAudit {

  /** Exit status: every order's copies agree. */
  public static final int EXIT_CLEAN = 0;
  /** Exit status: the audit finished and found problems. */
  public static final int EXIT_PROBLEMS = 1;
  /** Exit status: the arguments were wrong; nothing was read. */
  public static final int EXIT_BAD_ARGUMENTS = 2;
  /** Exit status: the audit could not finish (DynamoDB failed, was unreachable or timed out): no verdict. */
  public static final int EXIT_UNFINISHED = 3;

  static final String USAGE = """
      usage: audit [--segments N] [--pages-per-second N]
      exit status: 0 clean, 1 problems found, 2 bad arguments, 3 could not finish (DynamoDB failed, \
      was unreachable or timed out)""";

  public static final int DEFAULT_SEGMENTS = 4;
  public static final int DEFAULT_PAGES_PER_SECOND = 20;
  private static final int PAGE_ITEMS = 100;
  private static final int BATCH_GET_LIMIT = 100;

  /** One problem found: {@code kind} is MISSING_CUSTOMER_COPY, MISSING_DIRECT_COPY or COPIES_DISAGREE. */
  public record Finding(String kind, String orderId, String detail) {
    @Override
    public String toString() {
      return kind + " order_id=" + orderId + " " + detail;
    }
  }

  /** What one audit saw. */
  public record Report(long ordersChecked, List<Finding> findings) {}

  private final DynamoDbAsyncClient dynamo;
  private final String table;
  private final int segments;
  private final RateLimiter pages;

  public OrderAudit(DynamoDbAsyncClient dynamo, String table, int segments, int pagesPerSecond) {
    this.dynamo = dynamo;
    this.table = table;
    this.segments = segments;
    this.pages = RateLimiter.of("order-audit", RateLimiterConfig.custom()
        .limitForPeriod(pagesPerSecond)
        .limitRefreshPeriod(Duration.ofSeconds(1))
        .timeoutDuration(Duration.ofMinutes(10))
        .build());
  }

  /**
   * Runs the audit from the command line and returns its exit status: {@value #EXIT_CLEAN} clean,
   * {@value #EXIT_PROBLEMS} problems found, {@value #EXIT_BAD_ARGUMENTS} bad arguments,
   * {@value #EXIT_UNFINISHED} could not finish (then one line on {@code out} says why, without a stack
   * trace: an audit that stopped half-way has no verdict, so it must not read as clean or as findings).
   */
  public static int run(ServiceConfig config, String[] args, PrintStream out) {
    int segments = DEFAULT_SEGMENTS;
    int pagesPerSecond = DEFAULT_PAGES_PER_SECOND;
    try {
      for (int i = 0; i < args.length; i += 2) {
        switch (args[i]) {
          case "--segments" -> segments = Integer.parseInt(args[i + 1]);
          case "--pages-per-second" -> pagesPerSecond = Integer.parseInt(args[i + 1]);
          default -> throw new IllegalArgumentException(args[i]);
        }
      }
      if (segments < 1 || pagesPerSecond < 1) {
        throw new IllegalArgumentException("values must be positive");
      }
    } catch (RuntimeException e) {
      out.println(USAGE);
      return EXIT_BAD_ARGUMENTS;
    }
    Report report;
    try (DynamoDbAsyncClient dynamo = DynamoClients.create(config, List.of())) {
      report = new OrderAudit(dynamo, config.tableName(), segments, pagesPerSecond).audit();
    } catch (RuntimeException e) {
      out.println("audit table=" + config.tableName() + " could not finish: " + whyUnfinished(e, config));
      return EXIT_UNFINISHED;
    }
    report.findings().forEach(out::println);
    out.println("audit table=" + config.tableName() + " orders=" + report.ordersChecked()
        + " problems=" + report.findings().size());
    return report.findings().isEmpty() ? EXIT_CLEAN : EXIT_PROBLEMS;
  }

  /** Why an audit stopped, in one line: what DynamoDB answered, or that it could not be reached in time. */
  static String whyUnfinished(Throwable failure, ServiceConfig config) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    String why;
    if (cause instanceof ApiCallTimeoutException || cause instanceof ApiCallAttemptTimeoutException) {
      why = "DynamoDB did not answer within DYNAMODB_CALL_TIMEOUT_MS=" + config.dynamoCallTimeout().toMillis();
    } else if (cause instanceof AwsServiceException service) {
      AwsErrorDetails details = service.awsErrorDetails();
      why = "DynamoDB answered HTTP " + service.statusCode()
          + (details == null ? " (" + service.getMessage() + ")"
              : " " + details.errorCode() + " (" + details.errorMessage() + ")")
          + (service.requestId() == null ? "" : " request_id=" + service.requestId());
    } else if (cause instanceof SdkClientException) {
      Throwable root = cause;
      while (root.getCause() != null) {
        root = root.getCause();
      }
      why = "could not reach DynamoDB at " + config.dynamoEndpoint().map(URI::toString).orElse("AWS " + config.region())
          + " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
    } else if (cause instanceof RequestNotPermitted) {
      why = "the page rate limiter gave no permit in time";
    } else {
      why = "unexpected " + cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }
    return why.replaceAll("\\s+", " ");
  }

  /**
   * Walks the whole table; blocks until done (this is a tool, not a request handler).
   *
   * @throws CompletionException with the first DynamoDB failure of any segment, which ends the audit
   */
  public Report audit() {
    List<Finding> findings = Collections.synchronizedList(new ArrayList<>());
    AtomicLong orders = new AtomicLong();
    ExecutorService workers = Executors.newFixedThreadPool(segments);
    try {
      List<CompletableFuture<Void>> running = new ArrayList<>();
      for (int segment = 0; segment < segments; segment++) {
        int s = segment;
        running.add(CompletableFuture.runAsync(() -> auditSegment(s, findings, orders), workers));
      }
      // The first failure ends the audit: the other segments would only scan on towards no verdict.
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
    List<Finding> sorted = new ArrayList<>(findings);
    sorted.sort((a, b) -> (a.orderId() + a.kind()).compareTo(b.orderId() + b.kind()));
    return new Report(orders.get(), sorted);
  }

  private void auditSegment(int segment, List<Finding> findings, AtomicLong orders) {
    Map<String, AttributeValue> start = null;
    do {
      pages.acquirePermission();
      ScanRequest.Builder scan = ScanRequest.builder()
          .tableName(table)
          .segment(segment)
          .totalSegments(segments)
          .limit(PAGE_ITEMS)
          .filterExpression("#entity IN (:direct, :corridor)")
          .expressionAttributeNames(Map.of("#entity", "entity"))
          .expressionAttributeValues(Map.of(
              ":direct", AttributeValue.fromS(OrderItems.DIRECT_COPY),
              ":corridor", AttributeValue.fromS(OrderItems.CORRIDOR_COPY)));
      if (start != null) {
        scan.exclusiveStartKey(start);
      }
      ScanResponse page = dynamo.scan(scan.build()).join();
      List<Map<String, AttributeValue>> direct = new ArrayList<>();
      List<Map<String, AttributeValue>> corridor = new ArrayList<>();
      for (Map<String, AttributeValue> item : page.items()) {
        (OrderItems.DIRECT_COPY.equals(item.get("entity").s()) ? direct : corridor).add(item);
      }
      orders.addAndGet(direct.size());
      checkTwins(direct, true, findings);
      checkTwins(corridor, false, findings);
      start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
    } while (start != null);
  }

  /** For each copy, reads its twin: a missing twin or a disagreement is a finding. */
  private void checkTwins(List<Map<String, AttributeValue>> copies, boolean fromDirect, List<Finding> findings) {
    for (int from = 0; from < copies.size(); from += BATCH_GET_LIMIT) {
      List<Map<String, AttributeValue>> batch = copies.subList(from, Math.min(copies.size(), from + BATCH_GET_LIMIT));
      Map<String, Map<String, AttributeValue>> twins = batchGet(batch.stream().map(c -> twinKey(c, fromDirect)).toList());
      for (Map<String, AttributeValue> copy : batch) {
        String orderId = copy.get("order_id").s();
        Map<String, AttributeValue> twin = twins.get(keyText(twinKey(copy, fromDirect)));
        if (twin == null) {
          findings.add(new Finding(fromDirect ? "MISSING_CUSTOMER_COPY" : "MISSING_DIRECT_COPY", orderId,
              "customer_id=" + copy.get("customer_id").s()));
        } else if (fromDirect && !disagreement(copy, twin).isEmpty()) {
          // Read both again, strongly: an update may have landed between the scan and the batch read.
          Map<String, AttributeValue> directNow = get(copy);
          Map<String, AttributeValue> corridorNow = get(twin);
          List<String> differing = directNow == null || corridorNow == null ? List.of("missing")
              : disagreement(directNow, corridorNow);
          if (!differing.isEmpty()) {
            findings.add(new Finding("COPIES_DISAGREE", orderId, "attributes=" + String.join(",", differing)));
          }
        }
      }
    }
  }

  private static List<String> disagreement(Map<String, AttributeValue> a, Map<String, AttributeValue> b) {
    return OrderItems.SHARED_ATTRIBUTES.stream().filter(name -> !Objects.equals(a.get(name), b.get(name))).toList();
  }

  private static Map<String, AttributeValue> twinKey(Map<String, AttributeValue> copy, boolean fromDirect) {
    String orderId = copy.get("order_id").s();
    return fromDirect
        ? OrderItems.corridorKey(copy.get("customer_id").s(), LocalDate.parse(copy.get("order_date").s()), orderId)
        : OrderItems.directKey(orderId);
  }

  private Map<String, Map<String, AttributeValue>> batchGet(List<Map<String, AttributeValue>> keys) {
    Map<String, Map<String, AttributeValue>> found = new HashMap<>();
    Map<String, KeysAndAttributes> pending = Map.of(table, KeysAndAttributes.builder().keys(keys).consistentRead(true).build());
    while (!pending.isEmpty() && !pending.get(table).keys().isEmpty()) {
      pages.acquirePermission();
      Map<String, KeysAndAttributes> request = pending;
      var response = dynamo.batchGetItem(b -> b.requestItems(request)).join();
      response.responses().getOrDefault(table, List.of()).forEach(item -> found.put(keyText(item), item));
      pending = response.hasUnprocessedKeys() && response.unprocessedKeys().containsKey(table)
          ? response.unprocessedKeys() : Map.of();
    }
    return found;
  }

  private Map<String, AttributeValue> get(Map<String, AttributeValue> item) {
    Map<String, AttributeValue> key = Map.of(PK, item.get(PK), SK, item.get(SK));
    var response = dynamo.getItem(b -> b.tableName(table).key(key).consistentRead(true)).join();
    return response.hasItem() && !response.item().isEmpty() ? response.item() : null;
  }

  private static String keyText(Map<String, AttributeValue> item) {
    return item.get(PK).s() + "\n" + item.get(SK).s();
  }
}
