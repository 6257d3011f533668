package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.hotkeys.HotKeys;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.function.Consumer;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * Feeds every DynamoDB call into Micrometer (the AWS SDK has no Micrometer publisher of its own), per
 * operation and access pattern, so the cost of each route of the retrieval map is visible:
 * <ul>
 *   <li>{@code dynamodb_client_request_duration_seconds{operation,pattern,outcome}}: latency, with buckets;
 *   <li>{@code dynamodb_consumed_capacity_units_total{operation,pattern,kind}}: read or write capacity units
 *       (requests ask for {@code ReturnConsumedCapacity=TOTAL}; a transaction's read units, its
 *       ConditionChecks', count as reads);
 *   <li>{@code dynamodb_items_examined_total} and {@code dynamodb_items_returned_total}{@code {operation,pattern}}
 *       for queries and scans: their ratio is what a route costs per item it answers with.
 * </ul>
 * Repositories name the pattern of a request with {@link #pattern(String)}; label values are bounded
 * (operation names, pattern ids, outcome categories), never IDs.
 *
 * <p>It also hands {@link HotKeys} the partition key of every request that names its pattern, with the
 * capacity its answer consumed ({@link RequestKeys}); a failed attempt counts with none.
 */
public final class DynamoMetrics implements ExecutionInterceptor {

  /** The access pattern (route id, e.g. "A4") a request serves. */
  public static final ExecutionAttribute<String> ACCESS_PATTERN = new ExecutionAttribute<>("AccessPattern");
  private static final ExecutionAttribute<Long> STARTED = new ExecutionAttribute<>("MetricsStartNanos");
  /** The {@code pattern} label of a request that names none. */
  private static final String NO_PATTERN = "none";

  private final MeterRegistry registry;
  private final HotKeys hotKeys;

  public DynamoMetrics(MeterRegistry registry, HotKeys hotKeys) {
    this.registry = registry;
    this.hotKeys = hotKeys;
  }

  /** Marks a request as serving {@code patternId}: {@code builder.overrideConfiguration(pattern("A1"))}. */
  public static Consumer<AwsRequestOverrideConfiguration.Builder> pattern(String patternId) {
    return o -> o.putExecutionAttribute(ACCESS_PATTERN, patternId);
  }

  @Override
  public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
    attributes.putAttribute(STARTED, System.nanoTime());
  }

  @Override
  public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
    String operation = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
    String pattern = pattern(context.request(), attributes);
    SdkResponse response = context.response();
    // Keys a batch read left unprocessed were throttled: the attempt counts as one, as a throttled GetItem would.
    boolean unprocessed = response instanceof BatchGetItemResponse batch && batch.hasUnprocessedKeys()
        && !batch.unprocessedKeys().isEmpty();
    record(attributes, operation, pattern, unprocessed ? "throttled" : "success");
    List<ConsumedCapacity> capacities = consumed(response);
    for (ConsumedCapacity capacity : capacities) {
      if (capacity != null && capacity.capacityUnits() != null) {
        if (capacity.readCapacityUnits() != null || capacity.writeCapacityUnits() != null) {
          // A transaction splits them: its ConditionChecks are reads, whatever the operation's name says.
          countUnits(operation, pattern, "read", capacity.readCapacityUnits());
          countUnits(operation, pattern, "write", capacity.writeCapacityUnits());
        } else {
          countUnits(operation, pattern, isRead(operation) ? "read" : "write", capacity.capacityUnits());
        }
      }
    }
    countKeys(context.request(), pattern, totalUnits(capacities));
    if (response instanceof QueryResponse query) {
      countItems(operation, pattern, query.scannedCount(), query.count());
    } else if (response instanceof ScanResponse scan) {
      countItems(operation, pattern, scan.scannedCount(), scan.count());
    }
  }

  @Override
  public void onExecutionFailure(Context.FailedExecution context, ExecutionAttributes attributes) {
    String operation = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
    String pattern = pattern(context.request(), attributes);
    record(attributes, operation, pattern, outcome(context.exception()));
    // A throttled or timed-out attempt still went to its partition: hot keys are when that happens most.
    countKeys(context.request(), pattern, 0);
  }

  /** Each partition key the request went to, with an even part of the capacity its answer consumed. */
  private void countKeys(SdkRequest request, String pattern, double consumedUnits) {
    if (pattern.equals(NO_PATTERN)) {
      return; // the process's own requests (DescribeTable at start-up): no access pattern to count under
    }
    List<String> keys = RequestKeys.partitionKeys(request);
    for (String key : keys) {
      hotKeys.record(pattern, key, consumedUnits / keys.size());
    }
  }

  private void countUnits(String operation, String pattern, String kind, Double units) {
    if (units == null) {
      return;
    }
    Counter.builder("dynamodb.consumed.capacity.units")
        .description("capacity units consumed, by access pattern")
        .tags("operation", operation, "pattern", pattern, "kind", kind)
        .register(registry)
        .increment(units);
  }

  private void record(ExecutionAttributes attributes, String operation, String pattern, String outcome) {
    Long started = attributes.getAttribute(STARTED);
    if (started == null || operation == null) {
      return;
    }
    Timer.builder("dynamodb.client.request.duration")
        .description("DynamoDB requests, one per attempt (retries are counted one by one)")
        .tags("operation", operation, "pattern", pattern, "outcome", outcome)
        .register(registry)
        .record(System.nanoTime() - started, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  private void countItems(String operation, String pattern, Integer examined, Integer returned) {
    Counter.builder("dynamodb.items.examined").description("items a query or scan read")
        .tags("operation", operation, "pattern", pattern).register(registry).increment(examined == null ? 0 : examined);
    Counter.builder("dynamodb.items.returned").description("items a query or scan returned")
        .tags("operation", operation, "pattern", pattern).register(registry).increment(returned == null ? 0 : returned);
  }

  private static String pattern(SdkRequest request, ExecutionAttributes attributes) {
    String pattern = attributes.getAttribute(ACCESS_PATTERN);
    return pattern == null ? NO_PATTERN : pattern;
  }

  private static boolean isRead(String operation) {
    return operation.startsWith("Get") || operation.startsWith("Query") || operation.startsWith("Scan")
        || operation.startsWith("BatchGet") || operation.startsWith("Describe");
  }

  /** The capacity units {@code capacities} add up to (a transaction's and a batch's, over their tables). */
  static double totalUnits(List<ConsumedCapacity> capacities) {
    double units = 0;
    for (ConsumedCapacity capacity : capacities) {
      if (capacity != null && capacity.capacityUnits() != null) {
        units += capacity.capacityUnits();
      }
    }
    return units;
  }

  static List<ConsumedCapacity> consumed(SdkResponse response) {
    if (response instanceof GetItemResponse r) {
      return List.of(nullSafe(r.consumedCapacity()));
    } else if (response instanceof QueryResponse r) {
      return List.of(nullSafe(r.consumedCapacity()));
    } else if (response instanceof ScanResponse r) {
      return List.of(nullSafe(r.consumedCapacity()));
    } else if (response instanceof PutItemResponse r) {
      return List.of(nullSafe(r.consumedCapacity()));
    } else if (response instanceof UpdateItemResponse r) {
      return List.of(nullSafe(r.consumedCapacity()));
    } else if (response instanceof TransactWriteItemsResponse r && r.hasConsumedCapacity()) {
      return r.consumedCapacity();
    } else if (response instanceof BatchGetItemResponse r && r.hasConsumedCapacity()) {
      return r.consumedCapacity();
    } else if (response instanceof software.amazon.awssdk.services.dynamodb.model.TransactGetItemsResponse r
        && r.hasConsumedCapacity()) {
      return r.consumedCapacity();
    }
    return List.of();
  }

  private static ConsumedCapacity nullSafe(ConsumedCapacity capacity) {
    return capacity == null ? ConsumedCapacity.builder().build() : capacity;
  }

  /** A bounded outcome category for a failed call. */
  static String outcome(Throwable failure) {
    if (failure instanceof ConditionalCheckFailedException) {
      return "condition_failed";
    } else if (failure instanceof TransactionCanceledException cancelled) {
      // Cancelled because an item's partition was throttled: the hot product's writes are all transactions.
      return DynamoErrors.throttledTransaction(cancelled) ? "throttled" : "transaction_canceled";
    } else if (failure instanceof ApiCallTimeoutException || failure instanceof ApiCallAttemptTimeoutException) {
      return "timeout";
    } else if (failure instanceof DynamoDbException db) {
      if (DynamoErrors.throttling(db)) {
        return "throttled";
      }
      return db.statusCode() >= 500 ? "server_error" : "client_error";
    } else if (failure instanceof SdkClientException) {
      return "network_error";
    }
    return "error";
  }
}
