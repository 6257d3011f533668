package dev.warehouse.inventory.store;

import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;

/**
 * Every key of the inventory aggregate, built from the routes declared on the RPCs of
 * {@code warehouse.inventory.v1.InventoryService} (the retrieval map). The inventory owns the
 * {@code SERIAL#}, {@code PRODUCT#} and {@code WAREHOUSE#} prefixes; IDs are validated to exclude
 * {@code #} before they get here, so no input can forge another item's key.
 */
public final class InventoryKeys {

  public static final RouteTable ROUTES =
      RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService"));

  public static final Route SERIAL_ITEM = ROUTES.route("GetSerialItem");
  public static final Route PRODUCT_AT_WAREHOUSE = ROUTES.route("GetProductInventory");
  public static final Route WAREHOUSES_OF_PRODUCT = ROUTES.route("ListProductWarehouses");
  public static final Route PRODUCTS_IN_WAREHOUSE = ROUTES.route("ListWarehouseProducts");
  public static final Route PUT_SERIAL_ITEM = ROUTES.route("PutSerialItem");
  public static final Route PUT_INVENTORY = ROUTES.route("PutProductInventory");
  public static final Route ADJUST_STOCK = ROUTES.route("AdjustStock");

  private InventoryKeys() {}

  /** A1: {@code SERIAL#sn}. */
  public static String serialPk(String serialNumber) {
    return SERIAL_ITEM.partitionKey().render(serialNumber);
  }

  /** A1: {@code METADATA}. */
  public static String serialSk() {
    return SERIAL_ITEM.sortKey().render();
  }

  /** A2/A3: {@code PRODUCT#p}. */
  public static String productPk(String productId) {
    return PRODUCT_AT_WAREHOUSE.partitionKey().render(productId);
  }

  /** A2: {@code WAREHOUSE#w}. */
  public static String warehouseSk(String warehouseId) {
    return PRODUCT_AT_WAREHOUSE.sortKey().render(warehouseId);
  }

  /** A3: the sort-key prefix of a product's warehouses, {@code WAREHOUSE#}. */
  public static String warehousesPrefix() {
    return WAREHOUSES_OF_PRODUCT.sortKey().prefix();
  }

  /** A4, the second door: GSI1 partition {@code WAREHOUSE#w}. */
  public static String warehouseGsiPk(String warehouseId) {
    return PRODUCTS_IN_WAREHOUSE.partitionKey().render(warehouseId);
  }

  /** A4: GSI1 sort key {@code PRODUCT#p}; its prefix {@code PRODUCT#} is what A4 queries. */
  public static String productGsiSk(String productId) {
    return PRODUCTS_IN_WAREHOUSE.sortKey().prefix() + productId;
  }

  /** A4: the GSI1 sort-key prefix of a warehouse's products, {@code PRODUCT#}. */
  public static String productsPrefix() {
    return PRODUCTS_IN_WAREHOUSE.sortKey().prefix();
  }

  /** W3: the sort key of an AdjustStock request record, {@code REQUEST#id}, in the product's partition. */
  public static String requestSk(String requestId) {
    return ADJUST_STOCK.alsoWrites().get(0).sortKey().render(requestId);
  }
}
