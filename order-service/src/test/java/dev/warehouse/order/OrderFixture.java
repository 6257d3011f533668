package dev.warehouse.order;

import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.Reservation;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.testing.MetricsScrape;
import dev.warehouse.testing.Retries;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.RecordingInterceptor;
import dev.warehouse.runtime.testing.TestServices;
import com.google.type.Money;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The order-service as it runs in production (same wiring, real Netty server and channel), on its
 * own table in the shared moto server, behind a fault proxy, with every DynamoDB request recorded; and
 * beside it a real inventory-service on the same table (straight to moto), whose reservations the
 * orders buy their stock from.
 */
final class OrderFixture implements AutoCloseable {

  /** DynamoDB call timeout of the fault tests: short, so persistent faults end quickly. */
  static final Duration FAULT_TEST_CALL_TIMEOUT = Duration.ofSeconds(2);
  /**
   * DynamoDB call timeout otherwise, an upper bound ({@link dev.warehouse.testing.Patience}): 50 concurrent
   * transactions queue for seconds in the serialized moto, more on a loaded machine.
   */
  static final Duration CALL_TIMEOUT = dev.warehouse.testing.Patience.STEP;
  /** The product and warehouse of {@link #order}'s one line, stocked with plenty at start. */
  static final String PRODUCT = "P-ANY";
  static final String WAREHOUSE = "W-ANY";

  final String table = TestServices.uniqueTableName();
  final RecordingInterceptor recorder = new RecordingInterceptor();
  final DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint());
  /** Between the inventory-service and moto: faults of the inventory's own DynamoDB calls. */
  final DynamoFaultProxy inventoryProxy = DynamoFaultProxy.start(MotoServer.endpoint());
  final ServerProcess inventory;
  final ServerProcess process;
  final ManagedChannel channel;
  final ManagedChannel inventoryChannel;
  final DynamoDbAsyncClient dynamo;

  OrderFixture() throws Exception {
    this(CALL_TIMEOUT);
  }

  /** Without the recovery loop, whose background requests would mix with the ones a test records. */
  OrderFixture(Duration dynamoCallTimeout) throws Exception {
    this(dynamoCallTimeout, settings -> settings.withRecovery(settings.stepGrace(), Duration.ZERO));
  }

  /** With the order-service's settings changed by {@code adjust} (a shorter recovery, say). */
  OrderFixture(Duration dynamoCallTimeout, java.util.function.UnaryOperator<OrderSettings> adjust) throws Exception {
    inventory = DynamoPlugin.start(
        TestServices.config(InventoryMain.SERVICE_NAME, table, inventoryProxy.endpoint(), CALL_TIMEOUT),
        InventoryMain::services, List.of());
    inventoryChannel = NettyChannelBuilder.forAddress("127.0.0.1", inventory.grpcPort()).usePlaintext().build();
    process = DynamoPlugin.start(
        TestServices.config(OrderMain.SERVICE_NAME, table, proxy.endpoint(), dynamoCallTimeout),
        OrderMain.services(adjust.apply(OrderSettings.plaintext("127.0.0.1:" + inventory.grpcPort()))),
        List.of(recorder));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", process.grpcPort()).usePlaintext().build();
    dynamo = TestServices.dynamo(table);
    stock(PRODUCT, WAREHOUSE, 1_000_000_000_000L);
  }

  OrderServiceGrpc.OrderServiceBlockingStub stub() {
    return OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  InventoryServiceGrpc.InventoryServiceBlockingStub inventoryStub() {
    return InventoryServiceGrpc.newBlockingStub(inventoryChannel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  ReservationServiceGrpc.ReservationServiceBlockingStub reservations() {
    return ReservationServiceGrpc.newBlockingStub(inventoryChannel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  /**
   * Sets the stock on hand of a product at a warehouse, asked again after ABORTED: the tables of some tests inject
   * conflicts.
   */
  ProductInventory stock(String productId, String warehouseId, long quantity) {
    PutProductInventoryRequest request = PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder().setProductId(productId).setWarehouseId(warehouseId)
            .setQuantity(quantity))
        .build();
    return Retries.afterAborted(() -> inventoryStub().putProductInventory(request));
  }

  /** The stock of a product at a warehouse, read strongly. */
  ProductInventory stockOf(String productId, String warehouseId) {
    return inventoryStub().getProductInventory(GetProductInventoryRequest.newBuilder().setProductId(productId)
        .setWarehouseId(warehouseId).setConsistentRead(true).build());
  }

  Reservation reservation(String orderId) {
    return reservations().getReservation(GetReservationRequest.newBuilder().setOrderId(orderId).setConsistentRead(true)
        .build());
  }

  static String id(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  static Money eur(long units, int nanos) {
    return Money.newBuilder().setCurrencyCode("EUR").setUnits(units).setNanos(nanos).build();
  }

  static OrderLine line(String productId, String warehouseId, long quantity, Money unitPrice) {
    return OrderLine.newBuilder().setProductId(productId).setWarehouseId(warehouseId).setQuantity(quantity)
        .setUnitPrice(unitPrice).build();
  }

  /** An order of one line: 1 unit of the plentiful product, at 42.50 EUR. */
  static PlaceOrderRequest.Builder order(String customerId, String orderId, String date) {
    return PlaceOrderRequest.newBuilder().setCustomerId(customerId).setOrderId(orderId).setOrderDate(date)
        .addLines(line(PRODUCT, WAREHOUSE, 1, eur(42, 500_000_000))).setRequestId(id("req"));
  }

  /** An order as A5 lists it: a summary, without its lines (which only the direct copy holds). */
  static Order summary(Order order) {
    return order.toBuilder().clearLines().build();
  }

  /** Runs the consistency audit over this fixture's table. */
  AuditReport audit() {
    return new OrderAudit(new PacedScan(dynamo, table, "order-audit", new PacedScan.Options(2, 1000)), Clock.systemUTC(), OrderSettings.DEFAULT_RECOVERY_PERIOD).audit();
  }

  String scrapeMetrics() {
    return MetricsScrape.scrape(process.metricsPort());
  }

  @Override
  public void close() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    inventoryChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    process.close();
    inventory.close();
    proxy.close();
    inventoryProxy.close();
    dynamo.close();
  }
}
