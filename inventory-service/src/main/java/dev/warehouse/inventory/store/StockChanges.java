package dev.warehouse.inventory.store;

import static dev.warehouse.inventory.store.InventoryItems.AVAILABLE;
import static dev.warehouse.inventory.store.InventoryItems.QUANTITY;
import static dev.warehouse.inventory.store.InventoryItems.REORDER_POINT;
import static dev.warehouse.inventory.store.InventoryItems.RESERVED;
import static dev.warehouse.inventory.store.InventoryItems.UPDATE_TIME;
import static dev.warehouse.inventory.store.InventoryItems.VERSION;
import static dev.warehouse.runtime.dynamo.SingleTable.PK;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.runtime.dynamo.TableKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * The transaction items of one change of a stock record (on hand, reserved, and so available), shared
 * by AdjustStock and the reservations: the record's update, and its low-stock marker's move.
 *
 * <p>Away from the reorder point (not low before, not low after) the update adds to whatever the record
 * then holds, on the condition that it stays away from it, so concurrent changes of one item do not
 * conflict. Near it, or on a record written before reservations (without {@code available}), the
 * update sets every value, on the condition that the record is as read, and the marker moves in the
 * same transaction. A condition that fails means the record changed: re-read it and try again.
 */
public final class StockChanges {

  private final String table;
  private final LowStockShards lowStock;

  public StockChanges(String table, LowStockShards lowStock) {
    this.table = table;
    this.lowStock = lowStock;
  }

  /**
   * A stock record as read, whether it stores {@code reserved} and {@code available}, and its write count
   * ({@link InventoryItems#VERSION}, 0 before it was counted).
   */
  public record Read(ProductInventory stock, boolean storesAvailable, long version) {

    public Read(ProductInventory stock, boolean storesAvailable) {
      this(stock, storesAvailable, 0);
    }

    public static Read of(Map<String, AttributeValue> item) {
      return new Read(InventoryItems.toProductInventory(item), InventoryItems.storesAvailable(item),
          InventoryItems.version(item));
    }
  }

  /** The SET action that counts a write of a stock item (uses {@code #ver}, {@code :zero}, {@code :one}). */
  static final String COUNT_WRITE = "#ver = if_not_exists(#ver, :zero) + :one";

  /** Adds what {@link #COUNT_WRITE} uses. */
  static void countWrite(Map<String, String> names, Map<String, AttributeValue> values) {
    names.put("#ver", VERSION);
    values.put(":zero", AttributeValue.fromN("0"));
    values.put(":one", AttributeValue.fromN("1"));
  }

  /** A change of one bucket: units on hand and units reserved (available moves by their difference). */
  public record Delta(long quantity, long reserved) {

    Delta plus(Delta other) {
      return new Delta(quantity + other.quantity, reserved + other.reserved);
    }
  }

  /**
   * The items that take unsplit {@code current} by {@code quantityDelta} on hand and {@code reservedDelta}
   * reserved: its update first, then its marker's moves. The caller has checked that the result keeps
   * {@code 0 <= reserved <= quantity <= MAX_QUANTITY}.
   */
  public List<TransactWriteItem> change(Read current, long quantityDelta, long reservedDelta, Instant now) {
    return change(SplitStock.whole(current), new TreeMap<>(Map.of(0, new Delta(quantityDelta, reservedDelta))), now);
  }

  /**
   * The items that change the buckets of {@code whole} by {@code deltas} (bucket to change; each keeps
   * {@code 0 <= reserved <= quantity}, checked by the caller). When every changed bucket stays clear of
   * the reorder point before and after, so does their sum: each update adds to whatever its bucket then
   * holds, conditioned on staying clear, and no marker moves. Otherwise every changed bucket is set
   * from the values read, every other bucket is checked as read (ConditionCheck), and the marker moves
   * by the sum: no concurrent change of any bucket can slip between the read and the write.
   */
  public List<TransactWriteItem> change(SplitStock whole, SortedMap<Integer, Delta> deltas, Instant now) {
    List<TransactWriteItem> fast = new ArrayList<>();
    for (Map.Entry<Integer, Delta> d : deltas.entrySet()) {
      Optional<TransactWriteItem> item = fast(d.getKey(), whole.bucket(d.getKey()).orElseThrow(), d.getValue(), now);
      if (item.isEmpty()) {
        return asRead(whole, deltas, now);
      }
      fast.add(item.get());
    }
    return fast;
  }

  /**
   * The items of moves between the buckets of {@code whole} (deltas of on hand and available that sum to
   * nothing): each bucket added to when it stays clear of the reorder point, else set from the values
   * read. A move leaves the sum, and so the marker, as they were: it takes no lock of the record, and a
   * change near the reorder point decides the marker right whether or not a move came between its read and
   * its write (one that touched a bucket it writes fails its condition).
   */
  public List<TransactWriteItem> move(SplitStock whole, SortedMap<Integer, Delta> moves, Instant now) {
    List<TransactWriteItem> items = new ArrayList<>();
    for (Map.Entry<Integer, Delta> m : moves.entrySet()) {
      Read read = whole.bucket(m.getKey()).orElseThrow();
      items.add(fast(m.getKey(), read, m.getValue(), now).orElseGet(() -> setAsRead(m.getKey(), read, m.getValue(), now)));
    }
    return items;
  }

  /**
   * The update of bucket {@code bucket} (as {@code current} was read) by {@code delta}, adding to whatever
   * it then holds, when it stays clear of the reorder point before and after: then the whole stock is
   * not low either side, whatever the other buckets hold, and no marker moves. Empty otherwise.
   */
  public Optional<TransactWriteItem> fast(int bucket, Read current, Delta delta, Instant now) {
    ProductInventory before = current.stock();
    ProductInventory after = before.changed(delta.quantity(), delta.reserved(), now);
    if (!current.storesAvailable() || before.low() || after.low()) {
      return Optional.empty();
    }
    long availableDelta = delta.quantity() - delta.reserved();
    Map<String, String> names = new HashMap<>(Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#rs", RESERVED, "#av", AVAILABLE,
        "#pk", PK, "#rp", REORDER_POINT));
    Map<String, AttributeValue> values = new HashMap<>(Map.of(":now", AttributeValue.fromS(now.toString())));
    List<String> sets = new ArrayList<>();
    addTo(sets, values, "#q", ":dq", delta.quantity());
    addTo(sets, values, "#rs", ":dr", delta.reserved());
    addTo(sets, values, "#av", ":da", availableDelta);
    sets.add("#ut = :now");
    sets.add(COUNT_WRITE);
    countWrite(names, values);
    String update = "SET " + String.join(", ", sets);
    long lowest = before.reorderPoint() + 1 + Math.max(0, -availableDelta);
    values.put(":lowest", AttributeValue.fromN(Long.toString(lowest)));
    StringBuilder c = new StringBuilder("attribute_exists(#pk) AND #av >= :lowest AND ").append(reorderPointIs(before, values));
    if (delta.quantity() > 0) {
      c.append(" AND #q <= :highest");
      values.put(":highest", AttributeValue.fromN(Long.toString(ProductInventory.MAX_QUANTITY - delta.quantity())));
    }
    if (delta.reserved() < 0) {
      c.append(" AND #rs >= :released");
      values.put(":released", AttributeValue.fromN(Long.toString(-delta.reserved())));
    }
    return Optional.of(update(bucket, before, update, c.toString(), names, values));
  }

  /**
   * The slow path of {@link #change(SplitStock, SortedMap, Instant)}: the changed buckets set from the
   * values read, the marker moved by the sum. Of a split stock, the record is written too (as read, its
   * time moved on, when no unit of it changes): every change that moves the marker by the sum passes
   * through it, so two of them never both decide from one sum. A concurrent change that stayed clear of
   * the reorder point in another bucket needs no such lock: the sum was clear before and after it.
   */
  private List<TransactWriteItem> asRead(SplitStock whole, SortedMap<Integer, Delta> deltas, Instant now) {
    SortedMap<Integer, Delta> written = new TreeMap<>(deltas);
    if (whole.split()) {
      written.putIfAbsent(0, new Delta(0, 0));
    }
    List<TransactWriteItem> items = new ArrayList<>();
    Delta total = new Delta(0, 0);
    for (Map.Entry<Integer, Delta> d : written.entrySet()) {
      total = total.plus(d.getValue());
      items.add(setAsRead(d.getKey(), whole.bucket(d.getKey()).orElseThrow(), d.getValue(), now));
    }
    ProductInventory before = whole.sum();
    items.addAll(markerMoves(Optional.of(before), before.changed(total.quantity(), total.reserved(), now)));
    return items;
  }

  /** The update that sets bucket {@code bucket} to its values read, changed by {@code delta}, only as read. */
  private TransactWriteItem setAsRead(int bucket, Read read, Delta delta, Instant now) {
    Map<String, String> names = new HashMap<>(Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#rs", RESERVED, "#av", AVAILABLE,
        "#ver", VERSION));
    Map<String, AttributeValue> values = new HashMap<>();
    String condition = asRead(read, values);
    countWrite(names, values);
    ProductInventory after = read.stock().changed(delta.quantity(), delta.reserved(), now);
    values.put(":now", AttributeValue.fromS(now.toString()));
    values.put(":q_after", AttributeValue.fromN(Long.toString(after.quantity())));
    values.put(":rs_after", AttributeValue.fromN(Long.toString(after.reserved())));
    values.put(":av_after", AttributeValue.fromN(Long.toString(after.available())));
    return update(bucket, read.stock(), "SET #q = :q_after, #rs = :rs_after, #av = :av_after, #ut = :now, " + COUNT_WRITE,
        condition, names, values);
  }

  private TransactWriteItem update(int bucket, ProductInventory before, String update, String condition,
      Map<String, String> names, Map<String, AttributeValue> values) {
    // DynamoDB refuses names and values an expression does not use.
    String expressions = update + " " + condition;
    names.keySet().removeIf(name -> !uses(expressions, name));
    values.keySet().removeIf(value -> !uses(expressions, value));
    TableKey key = InventoryKeys.stockBucket(before.productId(), before.warehouseId(), bucket);
    return TransactWriteItem.builder().update(u -> u
        .tableName(table)
        .key(key.attributes())
        .updateExpression(update)
        .conditionExpression(condition)
        .expressionAttributeNames(names)
        .expressionAttributeValues(values))
        .build();
  }

  private static boolean uses(String expressions, String placeholder) {
    return java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(placeholder) + "(?![A-Za-z0-9_])")
        .matcher(expressions).find();
  }

  private static void addTo(List<String> sets, Map<String, AttributeValue> values, String name, String value, long delta) {
    if (delta != 0) {
      sets.add(name + " = " + name + " + " + value);
      values.put(value, AttributeValue.fromN(Long.toString(delta)));
    }
  }

  /** The condition that the reorder point is still {@code current}'s (records from before reorder points have none). */
  static String reorderPointIs(ProductInventory current, Map<String, AttributeValue> values) {
    values.put(":rp", AttributeValue.fromN(Long.toString(current.reorderPoint())));
    return current.reorderPoint() == 0 ? "(attribute_not_exists(#rp) OR #rp = :rp)" : "#rp = :rp";
  }

  /**
   * The condition that the record is as {@code current} was read: the same quantity, reserved units
   * (none stored, for a record from before reservations), last write and write count (none, for a record
   * from before it was counted). Uses {@code #q}, {@code #ut}, {@code #rs}, {@code #av} and {@code #ver};
   * adds its values to {@code values}.
   */
  public static String asRead(Read current, Map<String, AttributeValue> values) {
    values.put(":before", AttributeValue.fromN(Long.toString(current.stock().quantity())));
    values.put(":read_at", AttributeValue.fromS(current.stock().updateTime().toString()));
    String written;
    if (current.version() == 0) {
      written = "attribute_not_exists(#ver)";
    } else {
      written = "#ver = :ver_read";
      values.put(":ver_read", AttributeValue.fromN(Long.toString(current.version())));
    }
    if (!current.storesAvailable()) {
      return "#q = :before AND #ut = :read_at AND attribute_not_exists(#av) AND " + written;
    }
    values.put(":rs_before", AttributeValue.fromN(Long.toString(current.stock().reserved())));
    return "#q = :before AND #ut = :read_at AND #rs = :rs_before AND " + written;
  }

  /**
   * The marker writes that keep A7 in step with a record going from {@code before} to {@code after}:
   * delete the marker of the old available count, put the one of the new (with the record's new
   * values), each only while the record is low.
   */
  public List<TransactWriteItem> markerMoves(Optional<ProductInventory> before, ProductInventory after) {
    List<TransactWriteItem> moves = new ArrayList<>();
    Optional<TableKey> old = before.filter(ProductInventory::low)
        .map(b -> lowStock.marker(b.productId(), b.warehouseId(), b.available()));
    Optional<TableKey> now = Optional.of(after).filter(ProductInventory::low)
        .map(a -> lowStock.marker(a.productId(), a.warehouseId(), a.available()));
    if (old.isPresent() && !old.equals(now)) {
      moves.add(TransactWriteItem.builder().delete(d -> d.tableName(table).key(old.get().attributes())).build());
    }
    if (now.isPresent()) {
      moves.add(TransactWriteItem.builder().put(p -> p.tableName(table).item(InventoryItems.lowStockMarker(lowStock, after)))
          .build());
    }
    return moves;
  }
}
