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
    int shard = InventoryKeys.lowStockShard("P-1", "W-1");
    Map<String, String> fields = new java.util.HashMap<>(FIELDS);
    fields.put("shard", Route.FanOut.shardValue(shard));
    fields.put("quantity", "0000000000000007");
    TableKey marker = InventoryKeys.lowStockMarker("P-1", "W-1", 7);
    assertThat(InventoryKeys.ADJUST_STOCK.alsoWrites()).extracting(k -> RouteConformance.declaredKey(k, fields))
        .containsExactly(InventoryKeys.stockRequest("P-1", "r-1"), marker);
    assertThat(InventoryKeys.PUT_INVENTORY.alsoWrites()).extracting(k -> RouteConformance.declaredKey(k, fields))
        .containsExactly(marker);
    assertThat(marker.pk()).isEqualTo(InventoryKeys.LOW_STOCK.partitionKey().render(fields));
    assertThat(marker.sk()).startsWith(InventoryKeys.lowStockPrefix()).startsWith(InventoryKeys.LOW_STOCK.sortKey().render(fields));
  }

  @Test
  void lowStockShards_spreadRecords_stably_overTheDeclaredCount() {
    assertThat(InventoryKeys.LOW_STOCK_SHARDS.shardCount()).isEqualTo(16);
    java.util.Set<Integer> used = new java.util.HashSet<>();
    for (int p = 0; p < 200; p++) {
      int shard = InventoryKeys.lowStockShard("P" + p, "W1");
      assertThat(shard).isBetween(0, 15).isEqualTo(InventoryKeys.lowStockShard("P" + p, "W1"));
      used.add(shard);
    }
    assertThat(used).hasSize(16);
  }

  @Test
  void lowStockMarkers_sortByQuantity_thenProduct_thenWarehouse() {
    List<String> sortKeys = java.util.stream.Stream.of(
            InventoryKeys.lowStockMarker("P10", "W1", 3), InventoryKeys.lowStockMarker("P1", "W2", 3),
            InventoryKeys.lowStockMarker("P1-x", "W1", 3), InventoryKeys.lowStockMarker("P2", "W1", 12),
            InventoryKeys.lowStockMarker("P1", "W1", 3), InventoryKeys.lowStockMarker("P9", "W9", 0))
        .map(TableKey::sk).sorted().toList();
    assertThat(sortKeys).containsExactly(
        InventoryKeys.lowStockMarker("P9", "W9", 0).sk(), InventoryKeys.lowStockMarker("P1", "W1", 3).sk(),
        InventoryKeys.lowStockMarker("P1", "W2", 3).sk(), InventoryKeys.lowStockMarker("P1-x", "W1", 3).sk(),
        InventoryKeys.lowStockMarker("P10", "W1", 3).sk(), InventoryKeys.lowStockMarker("P2", "W1", 12).sk());
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
