package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.CommitReservationRequest;
import dev.warehouse.inventory.v1.ConfirmReservationRequest;
import dev.warehouse.inventory.v1.ReleaseReservationRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.testing.AuditChecks;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The low-stock marker audit finds stray and missing markers, and says so in its exit status: 0 clean,
 * 1 problems found, 2 bad arguments, 3 could not finish, and pushes that outcome to a Pushgateway when
 * one is configured (a Pushgateway that is down changes nothing). Data is written through the service's RPCs;
 * the broken pairs are planted behind its back with a plain client.
 */
@Tag("integration")
class InventoryAuditTest {

  private static final String[] ARGS = {"--segments", "3", "--pages-per-second", "500"};

  private static AuditChecks.Run audit(String table) {
    return AuditChecks.run(InventoryAudit.command(LowStockShards.DECLARED), config(table), ARGS);
  }

  /** Runs the audit, checking the outcome it pushes to a Pushgateway (AuditChecks#runPushing). */
  private static AuditChecks.Run auditPushing(String table) {
    return AuditChecks.runPushing(InventoryAudit.command(LowStockShards.DECLARED), config(table), "low_stock", ARGS);
  }

  private static StoreServiceConfig config(String table) {
    return AuditChecks.config(table, MotoServer.endpoint(), Duration.ofSeconds(10));
  }

  private static ProductInventory put(InventoryFixture inventory, String product, String warehouse, long quantity,
      long reorderPoint) {
    return inventory.stub().putProductInventory(PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder().setProductId(product).setWarehouseId(warehouse)
            .setQuantity(quantity).setReorderPoint(reorderPoint))
        .build());
  }

  private static ProductInventory adjust(InventoryFixture inventory, String product, String warehouse, long delta) {
    return inventory.stub().adjustStock(AdjustStockRequest.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setDelta(delta).setRequestId(id("r")).build());
  }

  @Test
  void cleanTable_exitsZero_withNoFindings() throws Exception {
    try (InventoryFixture inventory = new InventoryFixture()) {
      String dropping = id("P");
      String refilled = id("P");
      String sliding = id("P");
      put(inventory, dropping, "W1", 40, 10);   // above, then below after a pick
      put(inventory, refilled, "W1", 4, 10);    // below, then above after a refill
      put(inventory, sliding, "W2", 10, 10);    // at its reorder point (low), then lower: the marker moves
      put(inventory, id("P"), "W3", 0, 0);      // out of stock, no reorder point: low
      put(inventory, id("P"), "W3", 25, 0);     // never low
      put(inventory, refilled, "W2", 3, 5);     // low, then its reorder point drops below it
      adjust(inventory, dropping, "W1", -35);
      adjust(inventory, refilled, "W1", 20);
      adjust(inventory, sliding, "W2", -3);
      put(inventory, refilled, "W2", 3, 2);

      AuditChecks.Run run = auditPushing(inventory.table);

      assertThat(run.status()).as(run.output()).isZero();
      assertThat(run.lines()).singleElement().asString()
          .isEqualTo("audit table=" + inventory.table + " records=6 low=3 markers=3 problems=0");
    }
  }

  @Test
  void reportsStrayMissingAndUnreadableMarkers_plantedBehindTheServicesBack_andExitsOne() throws Exception {
    try (InventoryFixture inventory = new InventoryFixture();
        DynamoDbAsyncClient dynamo = TestServices.dynamo(inventory.table)) {
      String lostMarker = id("P");
      String extraMarker = id("P");
      String raisedBehindItsBack = id("P");
      String noRecord = id("P");
      put(inventory, id("P"), "W1", 1, 5); // low and in order: no finding
      put(inventory, id("P"), "W1", 50, 5); // not low and in order: no finding
      put(inventory, lostMarker, "W1", 3, 10);
      put(inventory, extraMarker, "W2", 5, 10);
      put(inventory, raisedBehindItsBack, "W3", 2, 10);

      dynamo.deleteItem(b -> b.tableName(inventory.table).key(LowStockShards.DECLARED.marker(lostMarker, "W1", 3).attributes()))
          .join();
      dynamo.putItem(b -> b.tableName(inventory.table).item(InventoryItems.lowStockMarker(LowStockShards.DECLARED,
          new dev.warehouse.inventory.domain.ProductInventory(extraMarker, "W2", 7, 10, Instant.now())))).join();
      dynamo.updateItem(b -> b.tableName(inventory.table)
          .key(InventoryKeys.stock(raisedBehindItsBack, "W3").attributes())
          .updateExpression("SET #q = :q, #a = :q").expressionAttributeNames(Map.of("#q", "quantity", "#a", "available"))
          .expressionAttributeValues(Map.of(":q", AttributeValue.fromN("50")))).join();
      dynamo.putItem(b -> b.tableName(inventory.table).item(InventoryItems.lowStockMarker(LowStockShards.DECLARED,
          new dev.warehouse.inventory.domain.ProductInventory(noRecord, "W9", 3, 10, Instant.now())))).join();

      String garbled = id("P");
      dynamo.putItem(b -> b.tableName(inventory.table).item(Map.of(
          "PK", AttributeValue.fromS(InventoryKeys.lowStockPk(0)), "SK", AttributeValue.fromS("QTY#garbled#" + garbled),
          "entity", AttributeValue.fromS(InventoryItems.LOW_STOCK_MARKER), "product_id", AttributeValue.fromS(garbled)))).join();

      AuditChecks.Run run = auditPushing(inventory.table);

      assertThat(run.status()).as(run.output()).isEqualTo(1);
      assertThat(run.lines()).containsExactlyInAnyOrder(
          "MISSING_MARKER product_id=" + lostMarker + " warehouse_id=W1 quantity=3 reorder_point=10",
          "STRAY_MARKER product_id=" + extraMarker + " warehouse_id=W2 quantity=7 record_quantity=5 record_available=5 reorder_point=10",
          "STRAY_MARKER product_id=" + raisedBehindItsBack + " warehouse_id=W3 quantity=2 record=not_low record_available=50 "
              + "reorder_point=10",
          "STRAY_MARKER product_id=" + noRecord + " warehouse_id=W9 quantity=3 record=missing",
          "UNREADABLE_ITEM pk=" + InventoryKeys.lowStockPk(0) + " sk=QTY#garbled#" + garbled + " entity=LowStockMarker",
          "audit table=" + inventory.table + " records=5 low=3 markers=6 problems=5");
      AuditChecks.assertPushgatewayDown_keepsTheExitStatus(InventoryAudit.command(LowStockShards.DECLARED),
          config(inventory.table), ARGS);
    }
  }

  @Test
  void reservedUnits_matchTheHeldReservations_andAPlantedDifference_isReported() throws Exception {
    try (InventoryFixture inventory = new InventoryFixture();
        DynamoDbAsyncClient dynamo = TestServices.dynamo(inventory.table)) {
      String held = id("P");
      String planted = id("P");
      put(inventory, held, "W1", 10, 3);
      put(inventory, planted, "W1", 10, 0);
      String a = id("o");
      String b = id("o");
      String c = id("o");
      for (String order : List.of(a, b, c)) {
        inventory.reservations().reserveStock(ReservationTest.reserve(order, ReservationTest.line(held, "W1", 2)));
      }
      inventory.reservations().confirmReservation(ConfirmReservationRequest.newBuilder().setOrderId(b).build());
      inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder().setOrderId(c).build());
      inventory.reservations().confirmReservation(ConfirmReservationRequest.newBuilder().setOrderId(a).build());
      inventory.reservations().commitReservation(CommitReservationRequest.newBuilder().setOrderId(a).build());
      // b's order, placed: its direct copy, at the key the order-service's GetOrder route declares.
      Map<String, AttributeValue> orderOfB = Map.of("PK", AttributeValue.fromS("ORDER#" + b),
          "SK", AttributeValue.fromS("METADATA"), "entity", AttributeValue.fromS("Order"));
      dynamo.putItem(p -> p.tableName(inventory.table).item(orderOfB)).join();

      AuditChecks.Run clean = audit(inventory.table);
      assertThat(clean.status()).as(clean.output()).isZero();

      // Units reserved behind the service's back, by no reservation (available kept in step).
      dynamo.updateItem(u -> u.tableName(inventory.table).key(InventoryKeys.stock(planted, "W1").attributes())
          .updateExpression("SET reserved = :r, available = :a")
          .expressionAttributeValues(Map.of(":r", AttributeValue.fromN("4"), ":a", AttributeValue.fromN("6")))).join();
      AuditChecks.Run run = audit(inventory.table);
      assertThat(run.status()).as(run.output()).isEqualTo(1);
      assertThat(run.lines()).contains(
          "RESERVED_MISMATCH product_id=" + planted + " warehouse_id=W1 quantity=10 reserved=4 held_by_reservations=0");

      // b's units held for an order that is gone: no one can ship or cancel it.
      dynamo.deleteItem(d -> d.tableName(inventory.table).key(Map.of("PK", orderOfB.get("PK"), "SK", orderOfB.get("SK"))))
          .join();
      AuditChecks.Run orphan = audit(inventory.table);
      assertThat(orphan.lines()).contains("CONFIRMED_WITHOUT_ORDER order_id=" + b + " reservation=CONFIRMED order=missing");
    }
  }

  /**
   * A scan is not a snapshot: markers move while it runs, and a page read a moment ago is stale by the
   * time its pairs are read. Stock crossing its reorder point back and forth through the service during
   * every audit is never a finding.
   */
  @Test
  void findsNothing_whileStockMovesAcrossItsReorderPointDuringTheAudit() throws Exception {
    try (InventoryFixture inventory = new InventoryFixture()) {
      List<String> products = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        products.add(id("P"));
        put(inventory, products.get(i), "W1", 10, 10);
      }
      AtomicBoolean auditing = new AtomicBoolean(true);
      ExecutorService writers = Executors.newFixedThreadPool(products.size());
      try {
        List<Future<Integer>> changes = new ArrayList<>();
        for (String product : products) {
          changes.add(writers.submit(() -> {
            int made = 0;
            while (auditing.get()) {
              adjust(inventory, product, "W1", made % 2 == 0 ? 3 : -3); // 10 (low) <-> 13 (not low)
              adjust(inventory, product, "W1", made % 2 == 0 ? -1 : 1); // and a move within the low range
              made++;
            }
            return made;
          }));
        }
        for (int i = 0; i < 3; i++) {
          AuditChecks.Run run = audit(inventory.table);
          assertThat(run.status()).as(run.output()).isZero();
        }
        auditing.set(false);
        for (Future<Integer> change : changes) {
          assertThat(change.get()).as("stock changes made during the audits").isPositive();
        }
      } finally {
        auditing.set(false);
        writers.shutdownNow();
      }
      assertThat(audit(inventory.table).status()).isZero();
    }
  }

  @Test
  void exitsTwo_withTheUsage_onBadArguments() {
    AuditChecks.assertExitsTwoWithTheUsage_onBadArguments(InventoryAudit.command(LowStockShards.DECLARED), TestServices.uniqueTableName());
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbFailsUnderIt() {
    AuditChecks.assertExitsThree_whenDynamoDbFailsUnderIt(InventoryAudit.command(LowStockShards.DECLARED), TestServices.uniqueTableName());
  }

  @Test
  void exitsThree_withOneLineSayingWhy_whenDynamoDbIsUnreachable() throws Exception {
    AuditChecks.assertExitsThree_whenDynamoDbIsUnreachable(InventoryAudit.command(LowStockShards.DECLARED), TestServices.uniqueTableName());
  }
}
