package dev.warehouse.inventory.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.testing.RouteConformance;
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
  void stockRequest_isTheRecordW3AlsoWrites() {
    assertThat(InventoryKeys.ADJUST_STOCK.alsoWrites()).extracting(InventoryKeysTest::declared)
        .containsExactly(InventoryKeys.stockRequest("P-1", "r-1"));
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
