package dev.warehouse.inventory.store;

import static dev.warehouse.inventory.store.InventoryItems.AVAILABLE;
import static dev.warehouse.inventory.store.InventoryItems.QUANTITY;
import static dev.warehouse.inventory.store.InventoryItems.REORDER_POINT;
import static dev.warehouse.inventory.store.InventoryItems.RESERVED;
import static dev.warehouse.inventory.store.InventoryItems.UPDATE_TIME;
import static dev.warehouse.runtime.dynamo.SingleTable.PK;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.runtime.dynamo.TableKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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

  /** A stock record as read, and whether it stores {@code reserved} and {@code available}. */
  public record Read(ProductInventory stock, boolean storesAvailable) {

    public static Read of(Map<String, AttributeValue> item) {
      return new Read(InventoryItems.toProductInventory(item), InventoryItems.storesAvailable(item));
    }
  }

  /**
   * The items that take {@code current} by {@code quantityDelta} on hand and {@code reservedDelta}
   * reserved: its update first, then its marker's moves. The caller has checked that the result keeps
   * {@code 0 <= reserved <= quantity <= MAX_QUANTITY}.
   */
  public List<TransactWriteItem> change(Read current, long quantityDelta, long reservedDelta, Instant now) {
    ProductInventory before = current.stock();
    ProductInventory after = before.changed(quantityDelta, reservedDelta, now);
    List<TransactWriteItem> moves = markerMoves(Optional.of(before), after);
    long availableDelta = quantityDelta - reservedDelta;
    Map<String, String> names = new HashMap<>(Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#rs", RESERVED, "#av", AVAILABLE));
    Map<String, AttributeValue> values = new HashMap<>(Map.of(":now", AttributeValue.fromS(now.toString())));
    String update;
    String condition;
    if (moves.isEmpty() && current.storesAvailable() && !before.low() && !after.low()) {
      // Clear of the reorder point before and after: add to whatever the record is by then, as long as
      // it stays clear of it (no marker), which also keeps quantity > reserved.
      List<String> sets = new ArrayList<>();
      addTo(sets, values, "#q", ":dq", quantityDelta);
      addTo(sets, values, "#rs", ":dr", reservedDelta);
      addTo(sets, values, "#av", ":da", availableDelta);
      sets.add("#ut = :now");
      update = "SET " + String.join(", ", sets);
      names.put("#pk", PK);
      names.put("#rp", REORDER_POINT);
      long lowest = before.reorderPoint() + 1 + Math.max(0, -availableDelta);
      values.put(":lowest", AttributeValue.fromN(Long.toString(lowest)));
      StringBuilder c = new StringBuilder("attribute_exists(#pk) AND #av >= :lowest AND ").append(reorderPointIs(before, values));
      if (quantityDelta > 0) {
        c.append(" AND #q <= :highest");
        values.put(":highest", AttributeValue.fromN(Long.toString(ProductInventory.MAX_QUANTITY - quantityDelta)));
      }
      if (reservedDelta < 0) {
        c.append(" AND #rs >= :released");
        values.put(":released", AttributeValue.fromN(Long.toString(-reservedDelta)));
      }
      condition = c.toString();
    } else {
      // Its marker moves (or the record predates reservations): only from exactly the record read.
      update = "SET #q = :q_after, #rs = :rs_after, #av = :av_after, #ut = :now";
      condition = asRead(current, values);
      values.put(":q_after", AttributeValue.fromN(Long.toString(after.quantity())));
      values.put(":rs_after", AttributeValue.fromN(Long.toString(after.reserved())));
      values.put(":av_after", AttributeValue.fromN(Long.toString(after.available())));
    }
    // DynamoDB refuses names and values an expression does not use.
    String expressions = update + " " + condition;
    names.keySet().removeIf(name -> !uses(expressions, name));
    values.keySet().removeIf(value -> !uses(expressions, value));
    List<TransactWriteItem> items = new ArrayList<>();
    items.add(TransactWriteItem.builder().update(u -> u
        .tableName(table)
        .key(InventoryKeys.stock(before.productId(), before.warehouseId()).attributes())
        .updateExpression(update)
        .conditionExpression(condition)
        .expressionAttributeNames(names)
        .expressionAttributeValues(values))
        .build());
    items.addAll(moves);
    return items;
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
   * (none stored, for a record from before reservations) and last write. Uses {@code #q}, {@code #ut},
   * {@code #rs} and {@code #av}; adds its values to {@code values}.
   */
  public static String asRead(Read current, Map<String, AttributeValue> values) {
    values.put(":before", AttributeValue.fromN(Long.toString(current.stock().quantity())));
    values.put(":read_at", AttributeValue.fromS(current.stock().updateTime().toString()));
    if (!current.storesAvailable()) {
      return "#q = :before AND #ut = :read_at AND attribute_not_exists(#av)";
    }
    values.put(":rs_before", AttributeValue.fromN(Long.toString(current.stock().reserved())));
    return "#q = :before AND #ut = :read_at AND #rs = :rs_before";
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
