package dev.warehouse.simulation;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.ReservationRepository;
import dev.warehouse.inventory.store.DynamoInventoryRepository;
import dev.warehouse.inventory.store.DynamoReservationRepository;
import dev.warehouse.inventory.store.StockBuckets;
import dev.warehouse.inventory.store.StockChanges;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The contract, on the DynamoDB repository against the strict moto, with injected transaction conflicts
 * and eventually consistent index reads: what the in-memory repository promises, DynamoDB keeps; and
 * keeps again with each product's stock split over {@link #buckets()} buckets (a subclass's).
 */
@Tag("integration")
class DynamoReservationsContractTest extends ReservationRepositoryContract {

  private static final String TABLE = TestServices.uniqueTableName();
  private static DynamoDbAsyncClient dynamo;
  private static ScheduledExecutorService scheduler;
  private static DynamoReservationRepository repository;
  private static DynamoInventoryRepository inventories;
  private static StockBuckets buckets;

  @BeforeAll
  static void start() {
    dynamo = TestServices.dynamo(TABLE);
    StrictMoto.table(TABLE).conflictRate(0.2).apply();
    scheduler = Executors.newSingleThreadScheduledExecutor();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    DynamoStore store = new DynamoStore(dynamo, TABLE, new DynamoCalls(scheduler, meters, Duration.ofSeconds(10)),
        new PageTokenCodec(TestServices.PAGE_TOKEN_KEY), meters);
    // The test moves units between buckets itself, once per product, before its calls.
    buckets = new StockBuckets(store, new StockChanges(TABLE, LowStockShards.DECLARED), java.time.Clock.systemUTC(),
        Duration.ofHours(1));
    repository = new DynamoReservationRepository(store, LowStockShards.DECLARED, buckets);
    inventories = new DynamoInventoryRepository(store, LowStockShards.DECLARED, buckets);
  }

  @AfterAll
  static void stop() {
    StrictMoto.reset(TABLE);
    scheduler.shutdownNow();
    dynamo.close();
  }

  /** The buckets each product's stock is spread over: 1, not split. */
  int buckets() {
    return 1;
  }

  @Override
  ReservationRepository repository() {
    return repository;
  }

  @Override
  String stocked(long quantity) {
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    dynamo.putItem(p -> p.tableName(TABLE).item(InventoryItems.toItem(new ProductInventory(product, "W1", quantity, 0, T))))
        .join();
    if (buckets() > 1) {
      inventories.setBucketCount(product, "W1", buckets(), T).join();
      buckets.rebalance(product, "W1", 1).join();
    }
    return product;
  }

  @Override
  long[] stock(String product) {
    ProductInventory read = inventories.findInventory(product, "W1", true).join().orElseThrow();
    return new long[] {read.quantity(), read.reserved()};
  }

  @Override
  <T> T await(CompletableFuture<T> call) {
    return call.join();
  }
}
