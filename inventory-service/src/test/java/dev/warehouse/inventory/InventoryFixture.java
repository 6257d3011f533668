package dev.warehouse.inventory;

import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.RecordingInterceptor;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.testing.Retries;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The inventory-service as it runs in production (same wiring, real Netty server and channel), on
 * its own table in the shared moto server, behind a fault proxy, with every DynamoDB request it makes
 * recorded.
 */
final class InventoryFixture implements AutoCloseable {

  /** DynamoDB call timeout of most tests: concurrent transactions queue for seconds in the serialized moto. */
  static final Duration CALL_TIMEOUT = dev.warehouse.testing.Patience.STEP; // an upper bound; see Patience

  final String table = TestServices.uniqueTableName();
  final RecordingInterceptor recorder = new RecordingInterceptor();
  final DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint());
  final ServerProcess process;
  final ManagedChannel channel;
  final InventoryServiceGrpc.InventoryServiceBlockingStub stub;

  InventoryFixture() throws Exception {
    this(CALL_TIMEOUT);
  }

  InventoryFixture(Duration dynamoCallTimeout) throws Exception {
    this(dynamoCallTimeout, LowStockShards.DECLARED);
  }

  /** With A7's markers on {@code shards} ({@code LOW_STOCK_SHARDS}) instead of the route's count. */
  InventoryFixture(LowStockShards shards) throws Exception {
    this(CALL_TIMEOUT, InventorySettings.DEFAULT.withShards(shards), null);
  }

  private InventoryFixture(Duration dynamoCallTimeout, LowStockShards shards) throws Exception {
    this(dynamoCallTimeout, InventorySettings.DEFAULT.withShards(shards), null);
  }

  /** With {@code settings} (the reservations' hold and expiry-loop period, say). */
  InventoryFixture(InventorySettings settings) throws Exception {
    this(CALL_TIMEOUT, settings, null);
  }

  /** With the concurrency limit {@code admission} ({@code ADMISSION_*}). */
  InventoryFixture(AdmissionConfig admission) throws Exception {
    this(CALL_TIMEOUT, InventorySettings.DEFAULT, admission);
  }

  /** {@code admission} null: the test services' limit, which no test's callers reach. */
  private InventoryFixture(Duration dynamoCallTimeout, InventorySettings settings, AdmissionConfig admission)
      throws Exception {
    StoreServiceConfig config = TestServices.config(InventoryMain.SERVICE_NAME, table, proxy.endpoint(), dynamoCallTimeout);
    process = DynamoPlugin.start(admission == null ? config : config.withAdmission(admission),
        context -> InventoryMain.services(context, settings), List.of(recorder));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", process.grpcPort()).usePlaintext().build();
    stub = InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(1, TimeUnit.HOURS);
  }

  /** ReservationService on the same process (plaintext: no peer check). */
  ReservationServiceGrpc.ReservationServiceBlockingStub reservations() {
    return ReservationServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  InventoryServiceGrpc.InventoryServiceBlockingStub stub() {
    return stub.withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  /** An ID no other test uses. */
  static String id(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Sets the stock on hand, asked again after ABORTED: the tables of some tests inject conflicts. */
  ProductInventory stock(String productId, String warehouseId, long quantity) {
    return Retries.afterAborted(() -> stub().putProductInventory(PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder()
            .setProductId(productId).setWarehouseId(warehouseId).setQuantity(quantity))
        .build()));
  }

  @Override
  public void close() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    process.close();
    proxy.close();
  }
}
