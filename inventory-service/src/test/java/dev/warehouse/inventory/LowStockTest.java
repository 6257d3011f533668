package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static dev.warehouse.testing.Statuses.assertInvalid;
import static dev.warehouse.testing.Statuses.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.ListLowStockResponse;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.testing.AuditChecks;
import dev.warehouse.runtime.testing.DynamoFaultProxy.Fault;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;

/**
 * A7: stock at or below its reorder point, lowest first, read from markers on 16 write shards that
 * move in the same transaction as every stock change. Each test has a table of its own, so the list
 * holds only what the test wrote.
 */
@Tag("integration")
class LowStockTest {

  private InventoryFixture inventory;

  @BeforeEach
  void start() throws Exception {
    inventory = new InventoryFixture();
  }

  @AfterEach
  void stop() throws Exception {
    inventory.close();
  }

  private ProductInventory put(String product, String warehouse, long quantity, long reorderPoint) {
    return inventory.stub().putProductInventory(PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder().setProductId(product).setWarehouseId(warehouse)
            .setQuantity(quantity).setReorderPoint(reorderPoint))
        .build());
  }

  private ProductInventory adjust(String product, String warehouse, long delta) {
    return inventory.stub().adjustStock(AdjustStockRequest.newBuilder().setProductId(product).setWarehouseId(warehouse)
        .setDelta(delta).setRequestId(id("r")).build());
  }

  /** Every page of A7, strongly read, in order. */
  private List<ProductInventory> lowStock(int pageSize) {
    List<ProductInventory> all = new ArrayList<>();
    String token = "";
    int pages = 0;
    do {
      ListLowStockResponse page = inventory.stub().listLowStock(ListLowStockRequest.newBuilder()
          .setPageSize(pageSize).setPageToken(token).setConsistentRead(true).build());
      assertThat(page.getInventoriesCount()).isLessThanOrEqualTo(pageSize);
      all.addAll(page.getInventoriesList());
      token = page.getNextPageToken();
      pages++;
    } while (!token.isEmpty() && pages < 100);
    return all;
  }

  private static List<String> keys(List<ProductInventory> list) {
    return list.stream().map(i -> i.getQuantity() + "/" + i.getProductId() + "/" + i.getWarehouseId()).toList();
  }

  @Test
  void listsExactlyTheLowRecords_lowestFirst_thenByProductAndWarehouse_pageByPage() {
    List<ProductInventory> low = new ArrayList<>();
    for (int p = 0; p < 12; p++) {
      for (String w : List.of("W1", "W2")) {
        long quantity = ThreadLocalRandom.current().nextLong(0, 20);
        ProductInventory stored = put("P" + p, w, quantity, 10);
        if (quantity <= 10) {
          low.add(stored);
        }
      }
    }
    put("P-out", "W1", 0, 0); // out of stock with the default reorder point: listed
    low.add(ProductInventory.newBuilder().setProductId("P-out").setWarehouseId("W1").build());
    put("P-full", "W1", 1, 0); // above its reorder point of 0: not listed

    low.sort(Comparator.comparingLong(ProductInventory::getQuantity).thenComparing(ProductInventory::getProductId)
        .thenComparing(ProductInventory::getWarehouseId));
    assertThat(keys(lowStock(4))).containsExactlyElementsOf(keys(low));
    assertThat(keys(lowStock(100))).containsExactlyElementsOf(keys(low));
    assertThat(lowStock(100)).allSatisfy(i -> assertThat(i.getQuantity()).isLessThanOrEqualTo(i.getReorderPoint()));
  }

  @Test
  void markersFollowEveryStockChange_inTheSameTransaction() {
    String product = id("P");
    put(product, "W1", 15, 10);
    assertThat(lowStock(10)).isEmpty();

    adjust(product, "W1", -6); // 9: crosses the reorder point
    assertThat(keys(lowStock(10))).containsExactly("9/" + product + "/W1");
    adjust(product, "W1", -4); // 5: still low, the marker moves
    assertThat(keys(lowStock(10))).containsExactly("5/" + product + "/W1");
    adjust(product, "W1", 20); // 25: clear again
    assertThat(lowStock(10)).isEmpty();
    put(product, "W1", 25, 30); // a new reorder point makes it low without a pick
    assertThat(keys(lowStock(10))).containsExactly("25/" + product + "/W1");
    put(product, "W1", 25, 0);
    assertThat(lowStock(10)).isEmpty();
  }

  @Test
  void concurrentCallersMovingStockAcrossTheThreshold_leaveMarkersThatMatchTheStock() {
    String product = id("P");
    List<String> warehouses = List.of("W1", "W2");
    warehouses.forEach(w -> put(product, w, 12, 10));
    List<CompletableFuture<Void>> callers = IntStream.range(0, 16)
        .mapToObj(c -> CompletableFuture.runAsync(() -> {
          for (int i = 0; i < 6; i++) {
            String warehouse = warehouses.get((c + i) % 2);
            long delta = (c + i) % 3 == 0 ? 2 : -1;
            try {
              adjust(product, warehouse, delta);
            } catch (StatusRuntimeException e) {
              // Too little stock, or still busy after the rounds: both say nothing was applied.
              assertThat(e.getStatus().getCode()).isIn(Status.Code.FAILED_PRECONDITION, Status.Code.ABORTED);
            }
          }
        }))
        .toList();
    CompletableFuture.allOf(callers.toArray(CompletableFuture[]::new)).join();

    List<String> expected = new ArrayList<>();
    for (String w : warehouses) {
      ProductInventory stock = inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
          .setProductId(product).setWarehouseId(w).setConsistentRead(true).build());
      if (stock.getQuantity() <= stock.getReorderPoint()) {
        expected.add(stock.getQuantity() + "/" + product + "/" + w);
      }
    }
    assertThat(keys(lowStock(10))).containsExactlyInAnyOrderElementsOf(expected);
    AuditChecks.Run audit = AuditChecks.run(InventoryAudit.command(LowStockShards.DECLARED),
        AuditChecks.config(inventory.table, MotoServer.endpoint(), Duration.ofSeconds(10)), "--pages-per-second", "500");
    assertThat(audit.status()).as("the consistency audit afterwards: %s", audit.output()).isZero();
  }

  @Test
  void anotherShardCount_listsTheSameOrder_withOneQueryPerShard_andOnlyItsOwnAuditFindsItsMarkersInPlace() throws Exception {
    LowStockShards four = LowStockShards.of(4);
    try (InventoryFixture deployed = new InventoryFixture(four)) {
      List<String> low = new ArrayList<>();
      List<String> movedByTheCount = new ArrayList<>();
      for (int p = 0; p < 12; p++) {
        String product = id("P");
        deployed.stub().putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
            .setProductId(product).setWarehouseId("W1").setQuantity(p).setReorderPoint(8)).build());
        if (p <= 8) {
          low.add(p + "/" + product + "/W1");
          if (four.shardOf(product, "W1") != LowStockShards.DECLARED.shardOf(product, "W1")) {
            movedByTheCount.add(product);
          }
        }
      }
      deployed.recorder.clear();
      ListLowStockResponse page = deployed.stub().listLowStock(ListLowStockRequest.newBuilder()
          .setPageSize(100).setConsistentRead(true).build());

      assertThat(keys(page.getInventoriesList())).containsExactlyElementsOf(low);
      assertThat(deployed.recorder.requests()).hasSize(4).allSatisfy(r -> assertThat(r).isInstanceOf(QueryRequest.class))
          .extracting(r -> ((QueryRequest) r).expressionAttributeValues().get(":pk").s())
          .containsExactlyInAnyOrder("LOW_STOCK#00", "LOW_STOCK#01", "LOW_STOCK#02", "LOW_STOCK#03");
      StoreServiceConfig audit = AuditChecks.config(deployed.table, MotoServer.endpoint(), Duration.ofSeconds(10));
      AuditChecks.Run own = AuditChecks.run(InventoryAudit.command(four), audit, "--pages-per-second", "500");
      assertThat(own.status()).as(own.output()).isZero();
      // The route's count looks for the markers elsewhere: each one it would place differently is reported.
      AuditChecks.Run declared = AuditChecks.run(InventoryAudit.command(LowStockShards.DECLARED), audit,
          "--pages-per-second", "500");
      assertThat(declared.status()).as(declared.output()).isEqualTo(movedByTheCount.isEmpty() ? 0 : 1);
      assertThat(declared.lines()).filteredOn(l -> l.startsWith("MISSING_MARKER"))
          .extracting(l -> movedByTheCount.stream().filter(l::contains).findFirst().orElse(l))
          .containsExactlyInAnyOrderElementsOf(movedByTheCount);
    }
  }

  @Test
  void sixtyFourShards_pageThroughEveryRecordInOrder_withTokensThatDoNotGrowWithTheShards() throws Exception {
    try (InventoryFixture deployed = new InventoryFixture(LowStockShards.of(64))) {
      List<String> low = new ArrayList<>();
      List<CompletableFuture<ProductInventory>> puts = new ArrayList<>();
      for (int p = 0; p < 90; p++) {
        String product = id("P-a-product-id-of-some-length");
        long quantity = p % 7;
        puts.add(CompletableFuture.supplyAsync(() -> deployed.stub().putProductInventory(PutProductInventoryRequest.newBuilder()
            .setInventory(ProductInventory.newBuilder().setProductId(product).setWarehouseId("W-warehouse-1")
                .setQuantity(quantity).setReorderPoint(10)).build())));
        low.add(quantity + "/" + product + "/W-warehouse-1");
      }
      puts.forEach(CompletableFuture::join);
      low.sort(Comparator.comparing((String k) -> Long.parseLong(k.substring(0, k.indexOf('/')))).thenComparing(k -> k));

      List<ProductInventory> walked = new ArrayList<>();
      String token = "";
      int longest = 0;
      do {
        ListLowStockResponse page = deployed.stub().listLowStock(ListLowStockRequest.newBuilder()
            .setPageSize(4).setPageToken(token).setConsistentRead(true).build());
        walked.addAll(page.getInventoriesList());
        token = page.getNextPageToken();
        longest = Math.max(longest, token.length());
      } while (!token.isEmpty() && walked.size() <= low.size());

      assertThat(keys(walked)).containsExactlyElementsOf(low);
      // One sort key and a bit per shard: far below the codec's limit, which 64 cursors passed.
      assertThat(longest).isLessThan(300);
    }
  }

  @Test
  void aCancelledTransaction_leavesNoStrayMarker() {
    String product = id("P");
    put(product, "W1", 11, 10);
    inventory.proxy.inject("TransactWriteItems", Fault.TRANSACTION_CONFLICT, Integer.MAX_VALUE);
    assertStatus(() -> adjust(product, "W1", -5), Status.Code.ABORTED, "TRANSACTION_CONFLICT");
    inventory.proxy.clear();
    assertThat(lowStock(10)).isEmpty();
    assertThat(inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId("W1").setConsistentRead(true).build()).getQuantity()).isEqualTo(11);
  }

  @Test
  void aShardQueryThatFails_failsThePage() {
    put(id("P"), "W1", 1, 10);
    inventory.proxy.inject("Query", Fault.HTTP_500, Integer.MAX_VALUE);
    assertStatus(() -> inventory.stub().listLowStock(ListLowStockRequest.newBuilder().setConsistentRead(true).build()),
        Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE");
  }

  @Test
  void reorderPoints_andPageTokens_areValidated() {
    assertInvalid(() -> put(id("P"), "W1", 1, -1), "inventory.reorder_point");
    assertInvalid(() -> put(id("P"), "W1", 1, dev.warehouse.inventory.domain.ProductInventory.MAX_QUANTITY + 1),
        "inventory.reorder_point");
    assertInvalid(() -> inventory.stub().listLowStock(ListLowStockRequest.newBuilder().setPageSize(-1).build()), "page_size");

    String product = id("P");
    put(product, "W1", 1, 10);
    put(product, "W2", 1, 10);
    String a3Token = inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
        .setProductId(product).setPageSize(1).setConsistentRead(true).build()).getNextPageToken();
    assertInvalid(() -> inventory.stub().listLowStock(ListLowStockRequest.newBuilder().setPageToken(a3Token).build()),
        "page_token");
    // A token sealed for another shard count (as one from before a reshard would be) is refused, not misread.
    String otherCount = new PageTokenCodec(TestServices.PAGE_TOKEN_KEY)
        .encode(InventoryKeys.LOW_STOCK.patternId() + "|shards=8", Map.of("00", ""));
    assertInvalid(() -> inventory.stub().listLowStock(ListLowStockRequest.newBuilder().setPageToken(otherCount).build()),
        "page_token");
    // Sealed for this route and count but not a shards' position (a mask of 8 shards, no sort key): refused.
    for (Map<String, String> state : List.of(Map.of("after", "QTY#1", "done", "00"), Map.of("done", "0000"),
        Map.of("after", "QTY#1", "done", "000G"))) {
      String malformed = new PageTokenCodec(TestServices.PAGE_TOKEN_KEY)
          .encode(InventoryKeys.LOW_STOCK.patternId() + "|shards=16", state);
      assertInvalid(() -> inventory.stub().listLowStock(ListLowStockRequest.newBuilder().setPageToken(malformed).build()),
          "page_token");
    }
  }
}
