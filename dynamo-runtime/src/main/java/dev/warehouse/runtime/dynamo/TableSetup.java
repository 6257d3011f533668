package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.log.Events;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ProjectionType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveSpecification;

/**
 * The idempotent "ensure table" step: creates the single table with its GSI1 when it is missing, and
 * waits until it is ACTIVE. Safe to run from several processes at once. Runs at start-up, off the
 * request path, so it may block.
 *
 * <p>A transient failure (a call that timed out, a refused connection, throttling) is asked again until
 * the set-up's time is up: a DynamoDB endpoint still starting, or an emulator busy serving a whole test
 * suite, would otherwise end the process although the table was a moment away.
 */
public final class TableSetup {

  private static final Logger log = LoggerFactory.getLogger(TableSetup.class);

  private TableSetup() {}

  /** Pause before asking again after a transient failure. */
  static final Duration PAUSE = Duration.ofMillis(500);
  /**
   * How often the wait for ACTIVE asks. DynamoDB makes a table in seconds; the SDK's waiter asks every 20 s, so a
   * first start waited 20 s for a table made in 5, and gave up at once with less than 20 s of its time left.
   */
  static final Duration POLL = Duration.ofSeconds(1);

  /**
   * Ensures the table within {@code timeout}, asking again after transient failures; throws the last failure past
   * it. The time can be overrun by one call's timeout (only the wait for ACTIVE is given what is left), and an
   * interrupt is noticed between attempts.
   */
  public static void ensureTable(DynamoDbAsyncClient dynamo, String tableName, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    // Kept across attempts: a create whose answer was lost, or whose wait failed, still made the table ours.
    AtomicBoolean createSent = new AtomicBoolean();
    while (true) {
      try {
        ensureOnce(dynamo, tableName, Duration.ofNanos(Math.max(deadline - System.nanoTime(), 1)), createSent);
        break;
      } catch (CompletionException e) {
        Throwable failure = unwrapWaiter(e);
        if (!DynamoErrors.isTransient(failure) || deadline - System.nanoTime() < PAUSE.toNanos()) {
          throw e;
        }
        Events.warn(log, "table_setup_retried").addKeyValue("table", tableName)
            .addKeyValue("error", failure.getClass().getSimpleName()).log();
        try {
          Thread.sleep(PAUSE.toMillis());
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
    if (createSent.get()) {
      enableTimeToLive(dynamo, tableName);
    }
  }

  /**
   * The failure itself: the SDK's waiter reports whatever ended it (access denied, say) as a client-side
   * exception around it, which alone would read as transient.
   */
  static Throwable unwrapWaiter(Throwable thrown) {
    Throwable failure = Failures.cause(thrown);
    return failure instanceof SdkClientException && failure.getCause() instanceof DynamoDbException db ? db : failure;
  }

  private static void ensureOnce(DynamoDbAsyncClient dynamo, String tableName, Duration timeout, AtomicBoolean createSent) {
    try {
      if (dynamo.describeTable(b -> b.tableName(tableName)).join().table().tableStatus() == TableStatus.ACTIVE) {
        return;
      }
    } catch (CompletionException e) {
      if (!(e.getCause() instanceof ResourceNotFoundException)) {
        throw e;
      }
      boolean sentBefore = createSent.getAndSet(true);
      if (!create(dynamo, tableName) && !sentBefore) {
        createSent.set(false); // another process's table: its creator sets its TTL
      }
    }
    dynamo.waiter()
        .waitUntilTableExists(b -> b.tableName(tableName), w -> w.waitTimeout(timeout)
            .backoffStrategyV2(BackoffStrategy.fixedDelayWithoutJitter(POLL))
            .maxAttempts(Integer.MAX_VALUE)) // the time bounds the wait, not a count of asks
        .join();
  }

  /** Returns false when another process created the table first. */
  private static boolean create(DynamoDbAsyncClient dynamo, String tableName) {
    try {
      dynamo.createTable(definition(tableName)).join();
      Events.info(log, "table_created").addKeyValue("table", tableName).log();
      return true;
    } catch (CompletionException e) {
      if (e.getCause() instanceof ResourceInUseException) {
        return false;
      }
      throw e;
    }
  }

  private static void enableTimeToLive(DynamoDbAsyncClient dynamo, String tableName) {
    dynamo.updateTimeToLive(b -> b.tableName(tableName).timeToLiveSpecification(timeToLive()))
        .exceptionally(e -> {
          // TTL only trims expired idempotency records; the table works without it.
          Events.warn(log, "ttl_not_enabled").addKeyValue("table", tableName)
              .addKeyValue("cause", e.getClass().getSimpleName()).log();
          return null;
        })
        .join();
  }

  /** TTL as the table gets it after creation; deploy/aws's template must declare the same. */
  public static TimeToLiveSpecification timeToLive() {
    return TimeToLiveSpecification.builder().enabled(true).attributeName(SingleTable.EXPIRE_AT).build();
  }

  /** The table as created here; deploy/aws's template must declare the same keys and indexes. */
  public static CreateTableRequest definition(String tableName) {
    return CreateTableRequest.builder()
        .tableName(tableName)
        .billingMode(BillingMode.PAY_PER_REQUEST)
        .attributeDefinitions(
            string(SingleTable.PK), string(SingleTable.SK), string(SingleTable.GSI1_PK), string(SingleTable.GSI1_SK))
        .keySchema(key(SingleTable.PK, KeyType.HASH), key(SingleTable.SK, KeyType.RANGE))
        .globalSecondaryIndexes(GlobalSecondaryIndex.builder()
            .indexName(SingleTable.GSI1)
            .keySchema(key(SingleTable.GSI1_PK, KeyType.HASH), key(SingleTable.GSI1_SK, KeyType.RANGE))
            .projection(p -> p.projectionType(ProjectionType.ALL))
            .build())
        .build();
  }

  private static AttributeDefinition string(String name) {
    return AttributeDefinition.builder().attributeName(name).attributeType(ScalarAttributeType.S).build();
  }

  private static KeySchemaElement key(String name, KeyType type) {
    return KeySchemaElement.builder().attributeName(name).keyType(type).build();
  }
}
