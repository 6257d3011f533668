package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.CommitReservationRequest;
import dev.warehouse.inventory.v1.ConfirmReservationRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.ReleaseReservationRequest;
import dev.warehouse.inventory.v1.ReservationLine;
import dev.warehouse.inventory.v1.ReserveStockRequest;
import dev.warehouse.inventory.v1.SetStockBucketsRequest;
import dev.warehouse.runtime.testing.AuditChecks;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.testing.Patience;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * A hot product's stock split over buckets (W10): every read reports the sums, a hold larger than any
 * one bucket spans several, OUT_OF_STOCK comes only when the sum is short, and units are conserved
 * through races with the count raised and lowered under them; the consistency audit agrees afterwards.
 */
@Tag("integration")
class StockBucketsTest {

  private static InventoryFixture inventory;
  private static DynamoDbAsyncClient dynamo;

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture();
    dynamo = TestServices.dynamo(inventory.table);
  }

  @AfterAll
  static void stop() throws Exception {
    dynamo.close();
    inventory.close();
  }

  private static ProductInventory put(String product, long quantity, long reorderPoint) {
    return inventory.stub().putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId("W1").setQuantity(quantity).setReorderPoint(reorderPoint)).build());
  }

  /** W10, asked again on ABORTED (the stock kept changing under racing holds), as a client would. */
  private static ProductInventory split(String product, int count) {
    for (int attempt = 1; ; attempt++) {
      try {
        return inventory.stub().setStockBuckets(SetStockBucketsRequest.newBuilder().setProductId(product).setWarehouseId("W1")
            .setBucketCount(count).build());
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.ABORTED || attempt == 5) {
          throw e;
        }
      }
    }
  }

  private static ProductInventory stock(String product) {
    return inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder().setProductId(product)
        .setWarehouseId("W1").setConsistentRead(true).build());
  }

  private static void hold(String order, String product, long quantity) {
    inventory.reservations().reserveStock(ReserveStockRequest.newBuilder().setOrderId(order)
        .addLines(ReservationLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(quantity)).build());
  }

  /** The units bucket {@code b} holds available, read behind the service's back; -1 when it does not exist. */
  private static long availableIn(String product, int b) {
    var item = dynamo.getItem(g -> g.tableName(inventory.table).consistentRead(true)
        .key(InventoryKeys.stockBucket(product, "W1", b).attributes())).join();
    return item.hasItem() && !item.item().isEmpty() ? Long.parseLong(item.item().get("available").n()) : -1;
  }

  /** Every bucket of the product's stock as stored, and the reservations of {@code orders}: a failure's context. */
  private static String state(String product, List<String> orders) {
    StringBuilder out = new StringBuilder();
    for (int b = 0; b < 17; b++) {
      var key = InventoryKeys.stockBucket(product, "W1", b).attributes();
      var item = dynamo.getItem(g -> g.tableName(inventory.table).consistentRead(true).key(key)).join();
      if (item.hasItem() && !item.item().isEmpty()) {
        out.append("\nbucket ").append(b).append(": ").append(item.item());
      }
    }
    for (String order : orders) {
      out.append("\n").append(order).append(": ").append(dynamo.getItem(g -> g.tableName(inventory.table).consistentRead(true)
          .key(InventoryKeys.reservation(order).attributes())).join().item());
    }
    return out.toString();
  }

  private static void assertAuditClean() {
    AuditChecks.Run audit = AuditChecks.run(InventoryAudit.command(LowStockShards.DECLARED),
        AuditChecks.config(inventory.table, MotoServer.endpoint(), Duration.ofSeconds(10)), "--pages-per-second", "500");
    assertThat(audit.status()).as("the consistency audit: %s", audit.output()).isZero();
  }

  @Test
  void splitting_keepsTheSums_spreadsTheUnits_andEveryReadReportsThem() {
    String product = id("P");
    put(product, 40, 0);
    ProductInventory answered = split(product, 4);
    assertThat(answered.getBucketCount()).isEqualTo(4);
    assertThat(answered.getQuantity()).isEqualTo(40);
    // Off the request path, the units move into the new buckets: 10 each.
    Awaitility.await().atMost(Patience.STEP).untilAsserted(() ->
        assertThat(List.of(availableIn(product, 0), availableIn(product, 1), availableIn(product, 2), availableIn(product, 3)))
            .containsOnly(10L));
    assertThat(stock(product)).satisfies(s -> {
      assertThat(s.getQuantity()).isEqualTo(40);
      assertThat(s.getAvailable()).isEqualTo(40);
      assertThat(s.getBucketCount()).isEqualTo(4);
    });
    assertThat(inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder().setProductId(product)
        .setConsistentRead(true).build()).getInventoriesList())
        .singleElement().satisfies(s -> assertThat(s.getQuantity()).isEqualTo(40));
    // A receipt is shared over the buckets; W2 sets the sum.
    assertThat(inventory.stub().adjustStock(AdjustStockRequest.newBuilder().setProductId(product).setWarehouseId("W1")
        .setDelta(8).setRequestId(id("r")).build()).getQuantity()).isEqualTo(48);
    assertThat(put(product, 30, 0).getQuantity()).isEqualTo(30);
    assertThat(stock(product).getQuantity()).isEqualTo(30);
    assertAuditClean();
  }

  @Test
  void aLineLargerThanAnyBucket_spansThem_andOutOfStockComesOnlyWhenTheSumIsShort() {
    String product = id("P");
    put(product, 20, 0);
    split(product, 4);
    Awaitility.await().atMost(Patience.STEP).until(() -> availableIn(product, 3) == 5);
    hold(id("o"), product, 17); // more than any bucket's 5
    assertThat(stock(product).getAvailable()).isEqualTo(3);
    // 3 left, spread over buckets: a hold of 3 takes them all, a 4th unit is out of stock.
    String last = id("o");
    hold(last, product, 3);
    assertThatThrownBy(() -> hold(id("o"), product, 1)).isInstanceOfSatisfying(StatusRuntimeException.class,
        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION));
    inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder().setOrderId(last).build());
    assertThat(stock(product).getAvailable()).isEqualTo(3);
    // A7 lists the sum: low once nothing is left, by the whole stock.
    hold(id("o"), product, 3);
    assertThat(inventory.stub().listLowStock(ListLowStockRequest.newBuilder().setConsistentRead(true).build())
        .getInventoriesList()).filteredOn(s -> s.getProductId().equals(product))
        .singleElement().satisfies(s -> assertThat(s.getAvailable()).isZero());
    assertAuditClean();
  }

  @Test
  void racingBuyers_getExactlyTheUnits_whileTheCountIsRaisedAndLowered_andUnitsAreConserved() throws Exception {
    String product = id("P");
    int units = 24;
    put(product, units, 2);
    split(product, 4);
    AtomicInteger held = new AtomicInteger();
    AtomicInteger outOfStock = new AtomicInteger();
    List<String> orders = Collections.synchronizedList(new ArrayList<>());
    ExecutorService buyers = Executors.newFixedThreadPool(8);
    try {
      List<CompletableFuture<Void>> calls = new ArrayList<>();
      for (int i = 0; i < 32; i++) {
        calls.add(CompletableFuture.runAsync(() -> {
          String order = id("o");
          try {
            hold(order, product, 1);
            held.incrementAndGet();
            orders.add(order);
          } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).as("%s", e.getStatus()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            outOfStock.incrementAndGet();
          }
        }, buyers));
      }
      // The count moves under the race: up, down, up.
      for (int count : List.of(8, 2, 6)) {
        split(product, count);
      }
      CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join();
    } finally {
      buyers.shutdownNow();
    }
    assertThat(held.get()).as("holds").isEqualTo(units);
    assertThat(outOfStock.get()).isEqualTo(32 - units);
    ProductInventory sold = stock(product);
    assertThat(sold.getQuantity()).isEqualTo(units);
    assertThat(sold.getReserved()).isEqualTo(units);
    // Half ship, half come back: the sums follow, whatever buckets their units came from.
    for (int i = 0; i < orders.size(); i++) {
      String order = orders.get(i);
      if (i % 2 == 0) {
        inventory.reservations().confirmReservation(ConfirmReservationRequest.newBuilder().setOrderId(order).build());
        inventory.reservations().commitReservation(CommitReservationRequest.newBuilder().setOrderId(order).build());
      } else {
        inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder().setOrderId(order).build());
      }
    }
    ProductInventory after = stock(product);
    assertThat(after.getQuantity()).withFailMessage(() -> "quantity " + after.getQuantity()
        + ", expected " + units / 2 + state(product, orders)).isEqualTo(units / 2);
    assertThat(after.getReserved()).isZero();
    split(product, 1);
    // Nothing reserved: the buckets above the count drain into the record and are deleted.
    Awaitility.await().atMost(Patience.STEP).untilAsserted(() -> {
      assertThat(availableIn(product, 0)).isEqualTo(units / 2);
      for (int b = 1; b < 8; b++) {
        assertThat(availableIn(product, b)).as("bucket %d", b).isEqualTo(-1);
      }
    });
    assertThat(stock(product).getQuantity()).isEqualTo(units / 2);
    assertAuditClean();
  }

  @Test
  void aBucketCountOutOfRange_isInvalid_andAnUnknownStock_notFound() {
    for (int count : List.of(0, 17)) {
      assertThatThrownBy(() -> split(id("P"), count)).isInstanceOfSatisfying(StatusRuntimeException.class,
          e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
    }
    assertThatThrownBy(() -> split(id("P"), 4)).isInstanceOfSatisfying(StatusRuntimeException.class,
        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
  }
}
