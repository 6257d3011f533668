package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.CommitReservationRequest;
import dev.warehouse.inventory.v1.ConfirmReservationRequest;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.ListExpiredHoldsRequest;
import dev.warehouse.inventory.v1.ReleaseReservationRequest;
import dev.warehouse.inventory.v1.ReservationLine;
import dev.warehouse.inventory.v1.ReserveStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ListWarehouseProductsRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.inventory.v1.SetStockBucketsRequest;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.testing.IamPolicyEvaluator;
import dev.warehouse.runtime.testing.RouteConformance;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;

/**
 * Every RPC of the inventory issues exactly the DynamoDB operations its declared route names, on the
 * declared key shape, and none ever issues a Scan; the service's IAM policy
 * ({@code deploy/aws/iam/inventory-service.json}) allows every request each call sent, and the calls
 * together need every grant it makes. Requests are recorded by an SDK interceptor on the service's own
 * client.
 */
@Tag("integration")
class RetrievalMapConformanceTest {

  private static InventoryFixture inventory;
  private static IamPolicyEvaluator policy;
  private static final Set<String> covered = new HashSet<>();
  private static final List<SdkRequest> background = new java.util.concurrent.CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    // No expiry sweep during the test: its queries would land among the requests of the call being checked.
    // Nor a split stock's rebalance: the test runs it itself, with requests of its own, to check them apart.
    inventory = new InventoryFixture(InventorySettings.DEFAULT.withReservations(Duration.ofSeconds(60), Duration.ofHours(1))
        .withRebalanceDelay(Duration.ofHours(1)));
    policy = IamPolicyEvaluator.checkedIn(InventoryMain.SERVICE_NAME, inventory.table);
  }

  @AfterAll
  static void everyRpcWasCheckedAndNothingScanned() throws Exception {
    try {
      assertThat(covered).containsExactlyInAnyOrderElementsOf(
          InventoryKeys.ALL_ROUTES.routes().stream().map(Route::methodName).toList());
      assertThat(inventory.recorder.requests()).noneMatch(r -> r instanceof ScanRequest);
      RouteConformance.assertWritesOnlyUnder(inventory.recorder.requests(), Set.of("SERIAL#", "PRODUCT#", "WAREHOUSE#", "LOW_STOCK#", "RESERVATION#"));
      RouteConformance.assertBackground(InventoryKeys.SET_STOCK_BUCKETS, background);
      if (!background.isEmpty()) {
        policy.assertAllows(background);
      }
      policy.assertEveryGrantUsed();
    } finally {
      inventory.close();
    }
  }

  /**
   * Runs one call and checks what it sent against the method's route. A split stock's rebalance (W10's
   * background work) is off in this fixture: the test runs it itself and checks its requests at the end.
   */
  private static <Q extends Message, R extends Message> void check(String method, Q request, Function<Q, R> call) {
    Route route = InventoryKeys.ALL_ROUTES.route(method);
    int from = inventory.recorder.requests().size();
    R response = call.apply(request);
    List<SdkRequest> all = inventory.recorder.requests();
    List<SdkRequest> sent = all.subList(from, all.size());
    RouteConformance.assertFollows(route, sent, request, response);
    policy.assertAllows(sent);
    covered.add(method);
  }

  @Test
  void a1_getSerialItem_andW1_putSerialItem() {
    String serial = id("SN");
    check("PutSerialItem", PutSerialItemRequest.newBuilder().setItem(SerialItem.newBuilder()
        .setSerialNumber(serial).setProductId("P100").setWarehouseId("W1")).build(), inventory.stub()::putSerialItem);
    check("GetSerialItem", GetSerialItemRequest.newBuilder().setSerialNumber(serial).setConsistentRead(true).build(),
        inventory.stub()::getSerialItem);
  }

  @Test
  void a2_a3_a4_andW2_W3_onOneProduct() {
    String product = id("P");
    String warehouse = id("W");
    check("PutProductInventory", PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setQuantity(5)).build(), inventory.stub()::putProductInventory);
    checkReads(product, warehouse);
    check("AdjustStock", AdjustStockRequest.newBuilder().setProductId(product).setWarehouseId(warehouse)
        .setDelta(-2).setRequestId(id("r")).build(), inventory.stub()::adjustStock);
  }

  /** A2, A3 and A4 of one product's stock at one warehouse. */
  private static void checkReads(String product, String warehouse) {
    check("GetProductInventory", GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setConsistentRead(true).build(), inventory.stub()::getProductInventory);
    check("ListProductWarehouses", ListProductWarehousesRequest.newBuilder().setProductId(product).setConsistentRead(true).build(),
        inventory.stub()::listProductWarehouses);
    check("ListWarehouseProducts", ListWarehouseProductsRequest.newBuilder().setWarehouseId(warehouse).build(),
        inventory.stub()::listWarehouseProducts);
  }

  @Test
  void a7_listLowStock_fansOutOneQueryPerShard_andW2_W3_moveTheMarkers() {
    String product = id("P");
    // Low from the start (W2 puts a marker), then deeper (W3 moves it), then clear (W3 deletes it).
    check("PutProductInventory", PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId("W1").setQuantity(3).setReorderPoint(5)).build(),
        inventory.stub()::putProductInventory);
    check("AdjustStock", AdjustStockRequest.newBuilder().setProductId(product).setWarehouseId("W1")
        .setDelta(-1).setRequestId(id("r")).build(), inventory.stub()::adjustStock);
    check("ListLowStock", ListLowStockRequest.newBuilder().setConsistentRead(true).build(), inventory.stub()::listLowStock);
    check("AdjustStock", AdjustStockRequest.newBuilder().setProductId(product).setWarehouseId("W1")
        .setDelta(10).setRequestId(id("r")).build(), inventory.stub()::adjustStock);
  }

  /**
   * Stock split over buckets (W10): every read of it takes one snapshot of them all, and every write
   * reaches its buckets by their declared keys; near the reorder point a hold checks every bucket, and
   * lowering the count drains and deletes the buckets above it, in the background.
   */
  @Test
  void w10_splitStock_readsAndWritesItsBuckets() throws Exception {
    String product = id("P");
    String warehouse = id("W");
    ReservationLine.Builder line = ReservationLine.newBuilder().setProductId(product).setWarehouseId(warehouse);
    inventory.stub().putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setQuantity(40).setReorderPoint(8)).build());
    check("SetStockBuckets", SetStockBucketsRequest.newBuilder().setProductId(product).setWarehouseId(warehouse)
        .setBucketCount(4).build(), inventory.stub()::setStockBuckets);
    check("PutProductInventory", PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setQuantity(40).setReorderPoint(8)).build(),
        inventory.stub()::putProductInventory);
    checkReads(product, warehouse);
    check("AdjustStock", AdjustStockRequest.newBuilder().setProductId(product).setWarehouseId(warehouse)
        .setDelta(-4).setRequestId(id("r")).build(), inventory.stub()::adjustStock);
    // 36 units over 4 buckets: 30 spans several, and takes the sum to the reorder point.
    String big = id("o");
    check("ReserveStock", ReserveStockRequest.newBuilder().setOrderId(big).addLines(line.clone().setQuantity(30)).build(),
        inventory.reservations()::reserveStock);
    check("ConfirmReservation", ConfirmReservationRequest.newBuilder().setOrderId(big).build(),
        inventory.reservations()::confirmReservation);
    check("CommitReservation", CommitReservationRequest.newBuilder().setOrderId(big).build(),
        inventory.reservations()::commitReservation);
    String small = id("o");
    check("ReserveStock", ReserveStockRequest.newBuilder().setOrderId(small).addLines(line.clone().setQuantity(2)).build(),
        inventory.reservations()::reserveStock);
    check("ReleaseReservation", ReleaseReservationRequest.newBuilder().setOrderId(small).build(),
        inventory.reservations()::releaseReservation);
    check("SetStockBuckets", SetStockBucketsRequest.newBuilder().setProductId(product).setWarehouseId(warehouse)
        .setBucketCount(1).build(), inventory.stub()::setStockBuckets);
    // Nothing is reserved any more: the rebalance drains buckets 1 to 3 into the record, then deletes them.
    int from = inventory.recorder.requests().size();
    rebalance(product, warehouse);
    List<SdkRequest> all = inventory.recorder.requests();
    List<SdkRequest> moves = all.subList(from, all.size());
    assertThat(moves).extracting(RouteConformance::operationOf).contains(
        dev.warehouse.routing.v1.Operation.OPERATION_TRANSACT_GET_ITEMS, dev.warehouse.routing.v1.Operation.OPERATION_TRANSACT_WRITE_ITEMS);
    background.addAll(moves);
    ProductInventory after = inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setConsistentRead(true).build());
    assertThat(after.getQuantity()).isEqualTo(6);
    assertThat(after.getBucketCount()).isEqualTo(1);
  }

  /** The service's rebalance of a split stock, run here to its end, on a client recording into the fixture's recorder. */
  private static void rebalance(String product, String warehouse) {
    var config = dev.warehouse.runtime.testing.TestServices.config("test", inventory.table);
    var scheduler = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    var meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    try (var dynamo = dev.warehouse.runtime.dynamo.DynamoClients.create(config, List.of(inventory.recorder))) {
      var store = new dev.warehouse.runtime.dynamo.DynamoStore(dynamo, inventory.table,
          new dev.warehouse.runtime.dynamo.DynamoCalls(scheduler, meters, Duration.ofSeconds(10)),
          new dev.warehouse.runtime.paging.PageTokenCodec(dev.warehouse.runtime.testing.TestServices.PAGE_TOKEN_KEY), meters);
      var shards = dev.warehouse.inventory.store.LowStockShards.DECLARED;
      new dev.warehouse.inventory.store.StockBuckets(store, new dev.warehouse.inventory.store.StockChanges(inventory.table, shards),
          java.time.Clock.systemUTC(), Duration.ofHours(1)).rebalance(product, warehouse, 1).join();
    } finally {
      scheduler.shutdownNow();
    }
  }

  @Test
  void w6_w9_a8_a9_reservations_acrossSeveralLines_andTheirMarkers() {
    String low = id("P");
    String plenty = id("P");
    // One line near its reorder point (its marker moves), one far from it (no marker).
    inventory.stock(plenty, "W1", 100);
    inventory.stub().putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(low).setWarehouseId("W2").setQuantity(5).setReorderPoint(3)).build());
    String order = id("o");
    check("ReserveStock", ReserveStockRequest.newBuilder().setOrderId(order)
        .addLines(ReservationLine.newBuilder().setProductId(low).setWarehouseId("W2").setQuantity(3))
        .addLines(ReservationLine.newBuilder().setProductId(plenty).setWarehouseId("W1").setQuantity(2)).build(),
        inventory.reservations()::reserveStock);
    check("GetReservation", GetReservationRequest.newBuilder().setOrderId(order).setConsistentRead(true).build(),
        inventory.reservations()::getReservation);
    check("ConfirmReservation", ConfirmReservationRequest.newBuilder().setOrderId(order).build(),
        inventory.reservations()::confirmReservation);
    check("CommitReservation", CommitReservationRequest.newBuilder().setOrderId(order).build(),
        inventory.reservations()::commitReservation);
    String released = id("o");
    inventory.reservations().reserveStock(ReserveStockRequest.newBuilder().setOrderId(released)
        .addLines(ReservationLine.newBuilder().setProductId(low).setWarehouseId("W2").setQuantity(1))
        .addLines(ReservationLine.newBuilder().setProductId(plenty).setWarehouseId("W1").setQuantity(1)).build());
    check("ReleaseReservation", ReleaseReservationRequest.newBuilder().setOrderId(released).build(),
        inventory.reservations()::releaseReservation);
    check("ListExpiredHolds", ListExpiredHoldsRequest.newBuilder().build(), inventory.reservations()::listExpiredHolds);
  }
}
