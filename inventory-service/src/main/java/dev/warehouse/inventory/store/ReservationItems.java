package dev.warehouse.inventory.store;

import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_PK;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_SK;

import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.Timestamps;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Maps reservations to table items and back; the one place that knows their attribute names. */
public final class ReservationItems {

  static final String ENTITY = "entity";
  /** The reservation's entity name. */
  public static final String RESERVATION = "Reservation";
  static final String ORDER_ID = "order_id";
  static final String STATE = "state";
  static final String LINES = "lines";
  static final String PRODUCT_ID = "product_id";
  static final String WAREHOUSE_ID = "warehouse_id";
  static final String QUANTITY = "quantity";
  /** A line's takes from a split stock's buckets: {@code [{bucket, quantity}]}; absent: all from bucket 0. */
  static final String TAKES = "takes";
  static final String BUCKET = "bucket";
  static final String HOLD_EXPIRE_TIME = "hold_expire_time";
  static final String RELEASE_CAUSE = "release_cause";
  static final String CREATE_TIME = "create_time";
  static final String UPDATE_TIME = "update_time";

  /**
   * How long a RELEASED or COMMITTED reservation is kept (its TTL): long past any retry of its order's
   * calls, so a late ReserveStock still finds the tombstone. TTL never moves stock: only ended
   * reservations, whose units are back or gone, carry it.
   */
  static final Duration ENDED_TTL = Duration.ofDays(7);

  private ReservationItems() {}

  /** A new HELD reservation, with the sparse GSI1 keys that list it in A9 until it is confirmed or released. */
  static Map<String, AttributeValue> held(Reservation r) {
    Map<String, AttributeValue> item = common(r);
    item.put(GSI1_PK, AttributeValue.fromS(InventoryKeys.holdsGsiPk(InventoryKeys.holdShard(r.orderId()))));
    item.put(GSI1_SK, AttributeValue.fromS(InventoryKeys.holdGsiSk(r.holdExpireTime(), r.orderId())));
    return item;
  }

  /** A reservation as stored, without index keys or TTL: for tools that answer as the table would (the bench's stand-in). */
  public static Map<String, AttributeValue> toItem(Reservation r) {
    return common(r);
  }

  /** A tombstone: RELEASED before it was reserved, no lines, with its TTL. */
  static Map<String, AttributeValue> tombstone(Reservation r) {
    Map<String, AttributeValue> item = common(r);
    item.put(SingleTable.EXPIRE_AT, expireAt(r.updateTime()));
    return item;
  }

  private static Map<String, AttributeValue> common(Reservation r) {
    Map<String, AttributeValue> item = new HashMap<>(InventoryKeys.reservation(r.orderId()).attributes());
    item.put(ENTITY, AttributeValue.fromS(RESERVATION));
    item.put(ORDER_ID, AttributeValue.fromS(r.orderId()));
    item.put(STATE, AttributeValue.fromS(r.state().name()));
    item.put(LINES, AttributeValue.fromL(r.lines().stream().map(ReservationItems::line).toList()));
    item.put(HOLD_EXPIRE_TIME, AttributeValue.fromS(r.holdExpireTime().toString()));
    r.releaseCause().ifPresent(c -> item.put(RELEASE_CAUSE, AttributeValue.fromS(c.name())));
    item.put(CREATE_TIME, AttributeValue.fromS(r.createTime().toString()));
    item.put(UPDATE_TIME, AttributeValue.fromS(r.updateTime().toString()));
    return item;
  }

  static AttributeValue expireAt(Instant ended) {
    return AttributeValue.fromN(Long.toString(ended.plus(ENDED_TTL).getEpochSecond()));
  }

  private static AttributeValue line(ReservationLine line) {
    Map<String, AttributeValue> m = new HashMap<>(Map.of(
        PRODUCT_ID, AttributeValue.fromS(line.productId()),
        WAREHOUSE_ID, AttributeValue.fromS(line.warehouseId()),
        QUANTITY, AttributeValue.fromN(Long.toString(line.quantity()))));
    // Only a line that took from a bucket other than 0 says so: the rest reads as before buckets.
    if (line.takes().stream().anyMatch(t -> t.bucket() != 0)) {
      m.put(TAKES, AttributeValue.fromL(line.takes().stream().map(t -> AttributeValue.fromM(Map.of(
          BUCKET, AttributeValue.fromN(Integer.toString(t.bucket())),
          QUANTITY, AttributeValue.fromN(Long.toString(t.quantity()))))).toList()));
    }
    return AttributeValue.fromM(m);
  }

  private static ReservationLine toLine(Map<String, AttributeValue> m) {
    ReservationLine line = new ReservationLine(m.get(PRODUCT_ID).s(), m.get(WAREHOUSE_ID).s(), Long.parseLong(m.get(QUANTITY).n()));
    return m.containsKey(TAKES)
        ? line.takenFrom(m.get(TAKES).l().stream().map(AttributeValue::m).map(t -> new ReservationLine.Take(
            Integer.parseInt(t.get(BUCKET).n()), Long.parseLong(t.get(QUANTITY).n()))).toList())
        : line.takenFrom(line.takesOrWhole());
  }

  public static Reservation toReservation(Map<String, AttributeValue> item) {
    List<ReservationLine> lines = item.containsKey(LINES)
        ? item.get(LINES).l().stream().map(AttributeValue::m).map(ReservationItems::toLine).toList()
        : List.of();
    return new Reservation(
        item.get(ORDER_ID).s(),
        Reservation.State.valueOf(item.get(STATE).s()),
        lines,
        Timestamps.parse(item.get(HOLD_EXPIRE_TIME).s()),
        Optional.ofNullable(item.get(RELEASE_CAUSE)).map(c -> Reservation.ReleaseCause.valueOf(c.s())),
        Timestamps.parse(item.get(CREATE_TIME).s()),
        Timestamps.parse(item.get(UPDATE_TIME).s()));
  }
}
