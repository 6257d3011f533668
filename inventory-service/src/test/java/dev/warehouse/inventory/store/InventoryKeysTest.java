package dev.warehouse.inventory.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.testing.RouteConformance;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each named key function builds exactly the key its routes declare in the contract (rendered by field name). */
class InventoryKeysTest {

  private static final Map<String, String> FIELDS = Map.of(
      "serial_number", "SN-1", "product_id", "P-1", "warehouse_id", "W-1", "request_id", "r-1");

  private static TableKey declared(Route route) {
    return RouteConformance.declaredKey(route, FIELDS);
  }

  private static TableKey declared(Route.ItemKey key) {
    return RouteConformance.declaredKey(key, FIELDS);
  }

  @Test
  void serialItem_isTheKeyOfA1AndW1() {
    assertThat(InventoryKeys.serialItem("SN-1"))
        .isEqualTo(declared(InventoryKeys.SERIAL_ITEM))
        .isEqualTo(declared(InventoryKeys.PUT_SERIAL_ITEM));
  }

  @Test
  void stock_isTheKeyOfA2W2AndW3() {
    assertThat(InventoryKeys.stock("P-1", "W-1"))
        .isEqualTo(declared(InventoryKeys.PRODUCT_AT_WAREHOUSE))
        .isEqualTo(declared(InventoryKeys.PUT_INVENTORY))
        .isEqualTo(declared(InventoryKeys.ADJUST_STOCK));
  }

  @Test
  void stockRequest_andLowStockMarker_areWhatW3AlsoWrites_andTheMarkerWhatW2AlsoWrites() {
    int shard = LowStockShards.DECLARED.shardOf("P-1", "W-1");
    Map<String, String> fields = new java.util.HashMap<>(FIELDS);
    fields.put("shard", Route.FanOut.shardValue(shard));
    fields.put("available", "0000000000000007");
    fields.put("bucket", "03");
    TableKey marker = LowStockShards.DECLARED.marker("P-1", "W-1", 7);
    TableKey bucket = InventoryKeys.stockBucket("P-1", "W-1", 3);
    assertThat(InventoryKeys.ADJUST_STOCK.alsoWrites()).extracting(k -> RouteConformance.declaredKey(k, fields))
        .containsExactly(bucket, InventoryKeys.stockRequest("P-1", "r-1"), marker);
    assertThat(InventoryKeys.PUT_INVENTORY.alsoWrites()).extracting(k -> RouteConformance.declaredKey(k, fields))
        .containsExactly(bucket, marker);
    assertThat(marker.pk()).isEqualTo(InventoryKeys.LOW_STOCK.partitionKey().render(fields));
    assertThat(marker.sk()).startsWith(InventoryKeys.lowStockPrefix()).startsWith(InventoryKeys.LOW_STOCK.sortKey().render(fields));
  }

  @Test
  void stockBuckets_areTheRecordAtZero_andEachAPartitionOfItsOwnAbove() {
    assertThat(InventoryKeys.stockBucket("P-1", "W-1", 0)).isEqualTo(InventoryKeys.stock("P-1", "W-1"));
    TableKey bucket = InventoryKeys.stockBucket("P-1", "W-1", 7);
    assertThat(bucket.pk()).isEqualTo("PRODUCT#P-1#BUCKET#07");
    assertThat(bucket.sk()).isEqualTo("WAREHOUSE#W-1");
    Map<String, String> fields = new java.util.HashMap<>(FIELDS);
    fields.put("bucket", "07");
    for (Route route : List.of(InventoryKeys.SET_STOCK_BUCKETS, InventoryKeys.RESERVE_STOCK, InventoryKeys.COMMIT_RESERVATION,
        InventoryKeys.RELEASE_RESERVATION, InventoryKeys.PUT_INVENTORY, InventoryKeys.ADJUST_STOCK)) {
      assertThat(route.alsoWrites()).as(route.patternId()).extracting(k -> k.partitionKey().variables().contains("bucket")
          ? RouteConformance.declaredKey(k, fields) : null).contains(bucket);
    }
    for (Route route : List.of(InventoryKeys.PRODUCT_AT_WAREHOUSE, InventoryKeys.WAREHOUSES_OF_PRODUCT,
        InventoryKeys.PRODUCTS_IN_WAREHOUSE)) {
      assertThat(route.alsoReads()).as(route.patternId()).extracting(k -> RouteConformance.declaredKey(k, fields))
          .containsExactly(InventoryKeys.stock("P-1", "W-1"), bucket);
    }
  }

  @Test
  void reservationKeys_areWhatTheReservationRoutesDeclare() {
    Map<String, String> fields = Map.of("order_id", "O-1", "product_id", "P-1", "warehouse_id", "W-1");
    for (Route route : List.of(InventoryKeys.RESERVE_STOCK, InventoryKeys.CONFIRM_RESERVATION,
        InventoryKeys.COMMIT_RESERVATION, InventoryKeys.RELEASE_RESERVATION, InventoryKeys.GET_RESERVATION)) {
      assertThat(RouteConformance.declaredKey(route, fields)).isEqualTo(InventoryKeys.reservation("O-1"));
    }
    // The writes that move stock also write each line's stock record.
    for (Route route : List.of(InventoryKeys.RESERVE_STOCK, InventoryKeys.COMMIT_RESERVATION, InventoryKeys.RELEASE_RESERVATION)) {
      assertThat(RouteConformance.declaredKey(route.alsoWrites().get(0), fields)).isEqualTo(InventoryKeys.stock("P-1", "W-1"));
    }
    Route holds = InventoryKeys.EXPIRED_HOLDS;
    int shard = InventoryKeys.holdShard("O-1");
    assertThat(InventoryKeys.holdsGsiPk(shard)).isEqualTo(holds.partitionKey().render(Route.FanOut.shardValue(shard)));
    java.time.Instant at = java.time.Instant.parse("2026-12-04T05:00:00Z");
    String key = InventoryKeys.holdGsiSk(at, "O-1");
    assertThat(key).startsWith(holds.sortKey().prefix()).isEqualTo("EXPIRES#2026-12-04T05:00:00.000000Z#O-1");
    // Fixed width: a later expiry always sorts after, and the bound of "expired by now" takes it in.
    assertThat(InventoryKeys.holdGsiSk(at.plusNanos(1000), "O-0")).isGreaterThan(key);
    assertThat(InventoryKeys.holdsExpiredBy(at)).isGreaterThan(key);
    assertThat(InventoryKeys.holdsExpiredBy(at.minusNanos(1000))).isLessThan(key);
  }

  @Test
  void lowStockShards_spreadRecords_stably_overTheDeclaredCount() {
    assertThat(LowStockShards.DECLARED.count()).isEqualTo(16);
    java.util.Set<Integer> used = new java.util.HashSet<>();
    for (int p = 0; p < 200; p++) {
      int shard = LowStockShards.DECLARED.shardOf("P" + p, "W1");
      assertThat(shard).isBetween(0, 15).isEqualTo(LowStockShards.DECLARED.shardOf("P" + p, "W1"));
      used.add(shard);
    }
    assertThat(used).hasSize(16);
  }

  @Test
  void anotherShardCount_keepsTheShardKey_andOnlyChangesTheModulus() {
    LowStockShards four = LowStockShards.of(4);
    assertThat(four.count()).isEqualTo(4);
    assertThat(LowStockShards.of(1).marker("P-1", "W-1", 7).pk()).isEqualTo("LOW_STOCK#00");
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    crc.update("P-1#W-1".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThat(four.shardOf("P-1", "W-1")).isEqualTo((int) (crc.getValue() % 4));
    assertThat(four.marker("P-1", "W-1", 7).sk()).isEqualTo(LowStockShards.DECLARED.marker("P-1", "W-1", 7).sk());
    assertThat(LowStockShards.of(64).marker("P-1", "W-1", 7).pk())
        .isEqualTo(InventoryKeys.lowStockPk((int) (crc.getValue() % 64)));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> LowStockShards.of(0)).isInstanceOf(IllegalArgumentException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> LowStockShards.of(101)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void lowStockMarkers_sortByQuantity_thenProduct_thenWarehouse() {
    List<String> sortKeys = java.util.stream.Stream.of(
            LowStockShards.DECLARED.marker("P10", "W1", 3), LowStockShards.DECLARED.marker("P1", "W2", 3),
            LowStockShards.DECLARED.marker("P1-x", "W1", 3), LowStockShards.DECLARED.marker("P2", "W1", 12),
            LowStockShards.DECLARED.marker("P1", "W1", 3), LowStockShards.DECLARED.marker("P9", "W9", 0))
        .map(TableKey::sk).sorted().toList();
    assertThat(sortKeys).containsExactly(
        LowStockShards.DECLARED.marker("P9", "W9", 0).sk(), LowStockShards.DECLARED.marker("P1", "W1", 3).sk(),
        LowStockShards.DECLARED.marker("P1", "W2", 3).sk(), LowStockShards.DECLARED.marker("P1-x", "W1", 3).sk(),
        LowStockShards.DECLARED.marker("P10", "W1", 3).sk(), LowStockShards.DECLARED.marker("P2", "W1", 12).sk());
  }

  @Test
  void queryKeys_areA3sPartitionAndPrefix_andA4sIndexPartitionAndPrefix() {
    assertThat(InventoryKeys.productPk("P-1")).isEqualTo(InventoryKeys.WAREHOUSES_OF_PRODUCT.partitionKey().render(FIELDS));
    assertThat(InventoryKeys.warehousesPrefix()).isEqualTo(InventoryKeys.WAREHOUSES_OF_PRODUCT.sortKey().render(FIELDS));
    assertThat(InventoryKeys.warehouseGsiPk("W-1")).isEqualTo(InventoryKeys.PRODUCTS_IN_WAREHOUSE.partitionKey().render(FIELDS));
    assertThat(InventoryKeys.productsPrefix()).isEqualTo(InventoryKeys.PRODUCTS_IN_WAREHOUSE.sortKey().render(FIELDS));
    assertThat(InventoryKeys.productGsiSk("P-1")).isEqualTo(InventoryKeys.productsPrefix() + "P-1");
  }
}
