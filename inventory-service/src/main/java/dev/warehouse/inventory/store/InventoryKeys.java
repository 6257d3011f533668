package dev.warehouse.inventory.store;

import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.inventory.v1.ReservationServiceProto;
import dev.warehouse.runtime.dynamo.DeclaredKey;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;

/**
 * Every key of the inventory aggregate, one named function each. The inventory owns the
 * {@code SERIAL#}, {@code PRODUCT#} and {@code WAREHOUSE#} prefixes; IDs are validated to exclude
 * {@code #} before they get here, so no input can forge another item's key. Each function renders
 * the templates the routes on the RPCs of {@code warehouse.inventory.v1.InventoryService} and
 * {@code ReservationService} declare (the retrieval map): it only types the values. What the routes
 * declare as a prefix only (a GSI1 sort key, the expiry of a hold), it completes after that prefix.
 * {@code InventoryKeysTest} renders each route's templates by field name and compares.
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
  public static final Route LOW_STOCK = ROUTES.route("ListLowStock");
  public static final Route SET_STOCK_BUCKETS = ROUTES.route("SetStockBuckets");

  /** The routes of {@code warehouse.inventory.v1.ReservationService}, which the inventory-service also serves. */
  public static final RouteTable RESERVATION_ROUTES =
      RouteTable.of(ReservationServiceProto.getDescriptor().findServiceByName("ReservationService"));

  /** Every route the inventory-service serves: its IAM policy and conformance tests cover them all. */
  public static final RouteTable ALL_ROUTES = RouteTable.combined("inventory-service", ROUTES, RESERVATION_ROUTES);

  public static final Route RESERVE_STOCK = RESERVATION_ROUTES.route("ReserveStock");
  public static final Route CONFIRM_RESERVATION = RESERVATION_ROUTES.route("ConfirmReservation");
  public static final Route COMMIT_RESERVATION = RESERVATION_ROUTES.route("CommitReservation");
  public static final Route RELEASE_RESERVATION = RESERVATION_ROUTES.route("ReleaseReservation");
  public static final Route GET_RESERVATION = RESERVATION_ROUTES.route("GetReservation");
  public static final Route EXPIRED_HOLDS = RESERVATION_ROUTES.route("ListExpiredHolds");

  // The keys as the routes declare them, picked by the fields they need: their text is in proto/ only.
  private static final DeclaredKey SERIAL_KEY = DeclaredKey.of(SERIAL_ITEM, "serial_number");
  private static final DeclaredKey STOCK_KEY = DeclaredKey.of(PRODUCT_AT_WAREHOUSE, "product_id", "warehouse_id");
  private static final DeclaredKey STOCK_REQUEST_KEY = DeclaredKey.of(ADJUST_STOCK, "product_id", "request_id");
  private static final DeclaredKey MARKER_KEY =
      DeclaredKey.of(ADJUST_STOCK, "shard", "available", "product_id", "warehouse_id");
  private static final DeclaredKey RESERVATION_KEY = DeclaredKey.of(GET_RESERVATION, "order_id");
  private static final DeclaredKey BUCKET_KEY = DeclaredKey.of(SET_STOCK_BUCKETS, "product_id", "bucket", "warehouse_id");
  /** Digits of a marker's quantity: 10^15, the most a record may hold, has 16. */
  private static final int QTY_DIGITS = 16;

  private InventoryKeys() {}

  /** A1, W1: {@code SERIAL#sn / METADATA}. */
  public static TableKey serialItem(String serialNumber) {
    return SERIAL_KEY.render(serialNumber);
  }

  /** A2, W2, W3: the stock of a product at a warehouse, {@code PRODUCT#p / WAREHOUSE#w}. */
  public static TableKey stock(String productId, String warehouseId) {
    return STOCK_KEY.render(productId, warehouseId);
  }

  /**
   * A bucket of a product's stock split over several (W10): bucket 0 is the stock record itself, bucket
   * {@code b > 0} is {@code PRODUCT#p#BUCKET#bb / WAREHOUSE#w}, a partition of its own ('#' is in no id,
   * so no product's key is another's bucket).
   */
  public static TableKey stockBucket(String productId, String warehouseId, int bucket) {
    return bucket == 0 ? stock(productId, warehouseId) : BUCKET_KEY.render(productId, Route.FanOut.shardValue(bucket), warehouseId);
  }

  /**
   * The product whose stock item (its record or one of its buckets) has partition key {@code pk}; empty
   * for any other key (a reservation's, a marker's).
   */
  public static java.util.Optional<String> productOfStock(String pk) {
    return STOCK_KEY.partitionKey().match(pk).or(() -> BUCKET_KEY.partitionKey().match(pk)).map(v -> v.get("product_id"));
  }

  /** W3: an AdjustStock request record, {@code PRODUCT#p / REQUEST#id}, beside the stock it changes. */
  public static TableKey stockRequest(String productId, String requestId) {
    return STOCK_REQUEST_KEY.render(productId, requestId);
  }

  /** A3: a product's partition, {@code PRODUCT#p}. */
  public static String productPk(String productId) {
    return WAREHOUSES_OF_PRODUCT.partitionKey().render(productId);
  }

  /** A3: the sort-key prefix of a product's warehouses, {@code WAREHOUSE#}. */
  public static String warehousesPrefix() {
    return WAREHOUSES_OF_PRODUCT.sortKey().prefix();
  }

  /** A4, the second door: GSI1 partition {@code WAREHOUSE#w}. */
  public static String warehouseGsiPk(String warehouseId) {
    return PRODUCTS_IN_WAREHOUSE.partitionKey().render(warehouseId);
  }

  /** A4: GSI1 sort key {@code PRODUCT#p}. */
  public static String productGsiSk(String productId) {
    return productsPrefix() + productId;
  }

  /** A4: the GSI1 sort-key prefix of a warehouse's products, {@code PRODUCT#}. */
  public static String productsPrefix() {
    return PRODUCTS_IN_WAREHOUSE.sortKey().prefix();
  }

  /** A7: the partition of one shard of low-stock markers, {@code LOW_STOCK#07}. */
  public static String lowStockPk(int shard) {
    return LOW_STOCK.partitionKey().render(Route.FanOut.shardValue(shard));
  }

  /**
   * W2, W3, W6, W8, W9: the low-stock marker of a record with {@code quantity} units available, in {@code shard} (which
   * {@link LowStockShards#marker} picks), {@code LOW_STOCK#ss / QTY#0000000000000003#PRODUCT#p#WAREHOUSE#w}:
   * within a shard, markers sort by quantity, then product, then warehouse, which is A7's order.
   */
  public static TableKey lowStockMarker(int shard, String productId, String warehouseId, long quantity) {
    String padded = String.format(java.util.Locale.ROOT, "%0" + QTY_DIGITS + "d", quantity);
    return MARKER_KEY.render(Route.FanOut.shardValue(shard), padded, productId, warehouseId);
  }

  /** W6-W9, A8: an order's reservation, {@code RESERVATION#o / METADATA}. */
  public static TableKey reservation(String orderId) {
    return RESERVATION_KEY.render(orderId);
  }

  /** A9: GSI1 partition of one shard of HELD reservations, {@code HOLDS#07}. */
  public static String holdsGsiPk(int shard) {
    return EXPIRED_HOLDS.partitionKey().render(Route.FanOut.shardValue(shard));
  }

  /** A9: the shard of an order's hold: CRC-32 of its id, modulo the route's shard count. */
  public static int holdShard(String orderId) {
    return EXPIRED_HOLDS.fanOut().orElseThrow().shardOf(orderId);
  }

  /**
   * A9: GSI1 sort key of a hold, {@code EXPIRES#2026-12-04T05:00:00.000000Z#o}: the expiry with a fixed
   * number of digits, so that keys sort by time, then by order.
   */
  public static String holdGsiSk(java.time.Instant expiry, String orderId) {
    return holdsPrefix() + expiryText(expiry) + "#" + orderId;
  }

  /** A9: the upper bound of holds expired at or before {@code now} (the order ids sort below {@code ~}). */
  public static String holdsExpiredBy(java.time.Instant now) {
    return holdsPrefix() + expiryText(now) + "#~";
  }

  /** A9: the sort-key prefix of every hold, {@code EXPIRES#}. */
  public static String holdsPrefix() {
    return EXPIRED_HOLDS.sortKey().prefix();
  }

  private static final java.time.format.DateTimeFormatter EXPIRY = java.time.format.DateTimeFormatter
      .ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'", java.util.Locale.ROOT).withZone(java.time.ZoneOffset.UTC);

  private static String expiryText(java.time.Instant instant) {
    return EXPIRY.format(instant);
  }

  /** A7: the sort-key prefix of every marker, {@code QTY#}. */
  public static String lowStockPrefix() {
    return LOW_STOCK.sortKey().prefix();
  }
}
