package dev.warehouse.simulation;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.ReservationRepository;
import dev.warehouse.inventory.store.DynamoReservationRepository;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.inventory.store.InventoryKeys;
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
 * and eventually consistent index reads: what the in-memory repository promises, DynamoDB keeps.
 */
@Tag("integration")
class DynamoReservationsContractTest extends ReservationRepositoryContract {

  private static final String TABLE = TestServices.uniqueTableName();
  private static DynamoDbAsyncClient dynamo;
  private static ScheduledExecutorService scheduler;
  private static DynamoReservationRepository repository;

  @BeforeAll
  static void start() {
    dynamo = TestServices.dynamo(TABLE);
    StrictMoto.table(TABLE).conflictRate(0.2).apply();
    scheduler = Executors.newSingleThreadScheduledExecutor();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    DynamoStore store = new DynamoStore(dynamo, TABLE, new DynamoCalls(scheduler, meters, Duration.ofSeconds(10)),
        new PageTokenCodec(TestServices.PAGE_TOKEN_KEY), meters);
    repository = new DynamoReservationRepository(store, LowStockShards.DECLARED);
  }

  @AfterAll
  static void stop() {
    StrictMoto.reset(TABLE);
    scheduler.shutdownNow();
    dynamo.close();
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
    return product;
  }

  @Override
  long[] stock(String product) {
    ProductInventory read = InventoryItems.toProductInventory(dynamo.getItem(g -> g.tableName(TABLE).consistentRead(true)
        .key(InventoryKeys.stock(product, "W1").attributes())).join().item());
    return new long[] {read.quantity(), read.reserved()};
  }

  @Override
  <T> T await(CompletableFuture<T> call) {
    return call.join();
  }
}
