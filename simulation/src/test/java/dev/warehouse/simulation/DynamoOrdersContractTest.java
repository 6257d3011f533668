package dev.warehouse.simulation;

import dev.warehouse.order.domain.OrderRepository;
import dev.warehouse.order.store.DynamoOrderRepository;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The contract, on the DynamoDB repository against the strict moto, with injected transaction conflicts
 * and eventually consistent reads: what the in-memory repository promises, DynamoDB keeps.
 */
@Tag("integration")
class DynamoOrdersContractTest extends OrderRepositoryContract {

  /**
   * The order repository leaves a conflict to the data layer's attempts (then ABORTED, for its caller to
   * retry): at this rate a call runs out of them once in 160,000, so the suite does not flake, and a run
   * still sees a few conflicts retried.
   */
  private static final double CONFLICTS = 0.05;
  private static final String TABLE = TestServices.uniqueTableName();
  private static DynamoDbAsyncClient dynamo;
  private static ScheduledExecutorService scheduler;
  private static DynamoOrderRepository repository;

  @BeforeAll
  static void start() {
    dynamo = TestServices.dynamo(TABLE);
    StrictMoto.table(TABLE).conflictRate(CONFLICTS).apply();
    scheduler = Executors.newSingleThreadScheduledExecutor();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    DynamoStore store = new DynamoStore(dynamo, TABLE, new DynamoCalls(scheduler, meters, Duration.ofSeconds(10)),
        new PageTokenCodec(TestServices.PAGE_TOKEN_KEY), meters);
    repository = new DynamoOrderRepository(store);
  }

  @AfterAll
  static void stop() {
    StrictMoto.reset(TABLE);
    scheduler.shutdownNow();
    dynamo.close();
  }

  @Override
  OrderRepository repository() {
    return repository;
  }

  @Override
  <T> T await(CompletableFuture<T> call) {
    return call.join();
  }

  @Override
  void everyTransactionConflicts(boolean on) {
    StrictMoto.table(TABLE).conflictRate(on ? 1.0 : CONFLICTS).apply();
  }
}
