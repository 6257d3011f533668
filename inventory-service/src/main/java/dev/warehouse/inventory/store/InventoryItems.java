package dev.warehouse.inventory.store;

import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_PK;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_SK;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.SerialItem;
import dev.warehouse.runtime.dynamo.Timestamps;
import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Maps inventory records to table items and back; the one place that knows their attribute names. */
public final class InventoryItems {

  static final String ENTITY = "entity";
  static final String SERIAL_NUMBER = "serial_number";
  static final String PRODUCT_ID = "product_id";
  static final String WAREHOUSE_ID = "warehouse_id";
  static final String DESCRIPTION = "description";
  static final String QUANTITY = "quantity";
  static final String RESERVED = "reserved";
  static final String AVAILABLE = "available";
  static final String REORDER_POINT = "reorder_point";
  static final String DELTA = "delta";
  static final String UPDATE_TIME = "update_time";
  /**
   * A stock item's write count: every write of its units adds one, so a condition on it fails after any
   * write since the read. The update time cannot serve: two processes can write in the same millisecond.
   */
  static final String VERSION = "version";
  static final String CREATE_TIME = "create_time";
  /** On the stock record of a split product: the buckets holds take from (N), and those that exist (K >= N). */
  static final String BUCKET_COUNT = "bucket_count";
  static final String BUCKETS_KEPT = "buckets_kept";
  static final String BUCKET = "bucket";
  /** A bucket's entity name (bucket 0 is the stock record itself). */
  public static final String STOCK_BUCKET = "StockBucket";

  /** The stock record's entity name. */
  public static final String STOCK = "ProductInventory";
  /** The low-stock marker's entity name. */
  public static final String LOW_STOCK_MARKER = "LowStockMarker";

  private InventoryItems() {}

  public static Map<String, AttributeValue> toItem(SerialItem item) {
    Map<String, AttributeValue> attrs = new HashMap<>(InventoryKeys.serialItem(item.serialNumber()).attributes());
    attrs.put(ENTITY, AttributeValue.fromS("SerialItem"));
    attrs.put(SERIAL_NUMBER, AttributeValue.fromS(item.serialNumber()));
    attrs.put(PRODUCT_ID, AttributeValue.fromS(item.productId()));
    attrs.put(WAREHOUSE_ID, AttributeValue.fromS(item.warehouseId()));
    attrs.put(DESCRIPTION, AttributeValue.fromS(item.description()));
    attrs.put(UPDATE_TIME, AttributeValue.fromS(item.updateTime().toString()));
    return attrs;
  }

  static SerialItem toSerialItem(Map<String, AttributeValue> attrs) {
    return new SerialItem(
        attrs.get(SERIAL_NUMBER).s(),
        attrs.get(PRODUCT_ID).s(),
        attrs.get(WAREHOUSE_ID).s(),
        attrs.containsKey(DESCRIPTION) ? attrs.get(DESCRIPTION).s() : "",
        Timestamps.parse(attrs.get(UPDATE_TIME).s()));
  }

  /** The stock item, with the GSI1 keys that put it behind A4's second door. */
  public static Map<String, AttributeValue> toItem(ProductInventory inventory) {
    return toItem(inventory, inventory.bucketCount());
  }

  /**
   * The stock item (for a split product: bucket 0's units, with the bucket counts), with the GSI1 keys
   * that put it behind A4's second door.
   */
  static Map<String, AttributeValue> toItem(ProductInventory inventory, int bucketsKept) {
    Map<String, AttributeValue> attrs = new HashMap<>(InventoryKeys.stock(inventory.productId(), inventory.warehouseId()).attributes());
    attrs.put(GSI1_PK, AttributeValue.fromS(InventoryKeys.warehouseGsiPk(inventory.warehouseId())));
    attrs.put(GSI1_SK, AttributeValue.fromS(InventoryKeys.productGsiSk(inventory.productId())));
    if (bucketsKept > 1) {
      attrs.put(BUCKET_COUNT, AttributeValue.fromN(Integer.toString(inventory.bucketCount())));
      attrs.put(BUCKETS_KEPT, AttributeValue.fromN(Integer.toString(bucketsKept)));
    }
    return withStock(attrs, STOCK, inventory);
  }

  /** Bucket {@code bucket > 0} of a split stock, holding {@code share}'s units; no index keys (A4 lists the record). */
  static Map<String, AttributeValue> bucketItem(ProductInventory share, int bucket) {
    Map<String, AttributeValue> attrs = new HashMap<>(
        InventoryKeys.stockBucket(share.productId(), share.warehouseId(), bucket).attributes());
    attrs.put(BUCKET, AttributeValue.fromN(Integer.toString(bucket)));
    return withStock(attrs, STOCK_BUCKET, share.withBucketCount(1));
  }

  /** The buckets that exist of the stock whose record is {@code attrs} (K): 1 unless split. */
  static int bucketsKept(Map<String, AttributeValue> attrs) {
    AttributeValue kept = attrs.get(BUCKETS_KEPT);
    return kept == null ? 1 : Integer.parseInt(kept.n());
  }

  /**
   * The low-stock marker of a low record (A7): in its shard's partition, sorted by quantity, and
   * carrying what A7 answers with, so the list never reads the stock items themselves.
   */
  public static Map<String, AttributeValue> lowStockMarker(LowStockShards shards, ProductInventory inventory) {
    Map<String, AttributeValue> attrs = new HashMap<>(
        shards.marker(inventory.productId(), inventory.warehouseId(), inventory.available()).attributes());
    if (inventory.bucketCount() > 1) {
      attrs.put(BUCKET_COUNT, AttributeValue.fromN(Integer.toString(inventory.bucketCount())));
    }
    return withStock(attrs, LOW_STOCK_MARKER, inventory);
  }

  /** The attributes a stock item and its marker share, so either answers with the same record. */
  private static Map<String, AttributeValue> withStock(Map<String, AttributeValue> attrs, String entity,
      ProductInventory inventory) {
    attrs.put(ENTITY, AttributeValue.fromS(entity));
    attrs.put(PRODUCT_ID, AttributeValue.fromS(inventory.productId()));
    attrs.put(WAREHOUSE_ID, AttributeValue.fromS(inventory.warehouseId()));
    attrs.put(QUANTITY, AttributeValue.fromN(Long.toString(inventory.quantity())));
    // available is stored, not derived on read: conditions (available >= :q) cannot do arithmetic.
    attrs.put(RESERVED, AttributeValue.fromN(Long.toString(inventory.reserved())));
    attrs.put(AVAILABLE, AttributeValue.fromN(Long.toString(inventory.available())));
    attrs.put(REORDER_POINT, AttributeValue.fromN(Long.toString(inventory.reorderPoint())));
    attrs.put(UPDATE_TIME, AttributeValue.fromS(inventory.updateTime().toString()));
    return attrs;
  }

  /**
   * A stock item, or a low-stock marker (which carries the same attributes). Items written before
   * reservations existed have no {@code reserved}: nothing is reserved of them, all is available.
   */
  public static ProductInventory toProductInventory(Map<String, AttributeValue> attrs) {
    AttributeValue reorderPoint = attrs.get(REORDER_POINT);
    AttributeValue reserved = attrs.get(RESERVED);
    return new ProductInventory(
        attrs.get(PRODUCT_ID).s(),
        attrs.get(WAREHOUSE_ID).s(),
        Long.parseLong(attrs.get(QUANTITY).n()),
        reorderPoint == null ? 0 : Long.parseLong(reorderPoint.n()), // written before reorder points existed
        Timestamps.parse(attrs.get(UPDATE_TIME).s()),
        reserved == null ? 0 : Long.parseLong(reserved.n()),
        attrs.containsKey(BUCKET_COUNT) ? Integer.parseInt(attrs.get(BUCKET_COUNT).n()) : 1);
  }

  /**
   * Whether a stock item stores {@code reserved} and {@code available}: only such an item can be changed
   * by adding to them; an older one is rewritten whole, from the values read.
   */
  public static boolean storesAvailable(Map<String, AttributeValue> attrs) {
    return attrs.containsKey(AVAILABLE) && attrs.containsKey(RESERVED);
  }

  /** A stock item's write count ({@link #VERSION}): 0 for an item written before it was counted. */
  static long version(Map<String, AttributeValue> attrs) {
    AttributeValue version = attrs.get(VERSION);
    return version == null ? 0 : Long.parseLong(version.n());
  }
}
