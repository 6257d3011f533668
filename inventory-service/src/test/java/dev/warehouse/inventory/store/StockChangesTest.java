package dev.warehouse.inventory.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.runtime.dynamo.TableKey;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * The transaction items of one change of a stock record. Clear of the reorder point before and
 * after, the change adds to whatever the record holds then, on a condition that keeps it clear (so
 * concurrent changes need not conflict); otherwise it rewrites the record from the values read, on the
 * condition that it is still as read, and its low-stock marker moves in the same transaction. Checked
 * here as requests; the services' tests run them against the launcher.
 */
class StockChangesTest {

  private static final String TABLE = "table";
  private static final LowStockShards SHARDS = LowStockShards.of(4);
  private static final Instant READ_AT = Instant.parse("2026-03-01T10:00:00Z");
  private static final Instant NOW = READ_AT.plus(Duration.ofSeconds(5));
  private static final Pattern NAME = Pattern.compile("#[A-Za-z0-9_]+");
  private static final Pattern VALUE = Pattern.compile(":[A-Za-z0-9_]+");

  private final StockChanges changes = new StockChanges(TABLE, SHARDS);

  // Clear of the reorder point: add to the record

  @Test
  void pickingClearOfTheReorderPoint_addsToTheRecord_onTheConditionThatItStaysClear() {
    List<TransactWriteItem> items = changes.change(read(100, 10, 0), -5, 0, NOW);

    Update update = items.get(0).update();
    assertThat(items).as("no marker moves").hasSize(1);
    assertThat(update.key()).isEqualTo(InventoryKeys.stock("p1", "w1").attributes());
    assertThat(update.updateExpression()).isEqualTo("SET #q = #q + :dq, #av = #av + :da, #ut = :now, " + StockChanges.COUNT_WRITE);
    assertThat(update.expressionAttributeValues()).containsEntry(":dq", n(-5)).containsEntry(":da", n(-5))
        .containsEntry(":now", AttributeValue.fromS(NOW.toString()));
    // At least 16 available before taking 5 leaves at least 11: still above the reorder point of 10.
    assertThat(update.conditionExpression()).isEqualTo("attribute_exists(#pk) AND #av >= :lowest AND #rp = :rp");
    assertThat(update.expressionAttributeValues()).containsEntry(":lowest", n(16)).containsEntry(":rp", n(10));
  }

  @Test
  void reservingClearOfTheReorderPoint_movesUnitsFromAvailableToReserved_andLeavesOnHandAlone() {
    Update update = changes.change(read(100, 10, 4), 0, 3, NOW).get(0).update();

    assertThat(update.updateExpression()).isEqualTo("SET #rs = #rs + :dr, #av = #av + :da, #ut = :now, " + StockChanges.COUNT_WRITE);
    assertThat(update.expressionAttributeValues()).containsEntry(":dr", n(3)).containsEntry(":da", n(-3))
        .containsEntry(":lowest", n(14)).doesNotContainKey(":dq");
    assertThat(update.expressionAttributeNames()).doesNotContainKey("#q");
  }

  @Test
  void releasingClearOfTheReorderPoint_checksThatAsManyUnitsAreStillReserved() {
    Update update = changes.change(read(100, 10, 4), 0, -2, NOW).get(0).update();

    assertThat(update.conditionExpression()).endsWith(" AND #rs >= :released");
    assertThat(update.expressionAttributeValues()).containsEntry(":released", n(2))
        .as("a release only raises available: the record need only be clear now").containsEntry(":lowest", n(11));
  }

  @Test
  void receivingClearOfTheReorderPoint_checksThatOnHandStaysWithinTheMaximum() {
    Update update = changes.change(read(100, 10, 0), 7, 0, NOW).get(0).update();

    assertThat(update.conditionExpression()).contains(" AND #q <= :highest");
    assertThat(update.expressionAttributeValues())
        .containsEntry(":highest", n(ProductInventory.MAX_QUANTITY - 7))
        .containsEntry(":lowest", n(11));
  }

  @Test
  void recordWithoutAReorderPoint_isClearOfIt_whenItStoresNone() {
    Update update = changes.change(read(100, 0, 0), -1, 0, NOW).get(0).update();

    // Records written before reorder points have no attribute: 0 is what they mean.
    assertThat(update.conditionExpression()).contains("(attribute_not_exists(#rp) OR #rp = :rp)");
    assertThat(update.expressionAttributeValues()).containsEntry(":rp", n(0)).containsEntry(":lowest", n(2));
  }

  // Near the reorder point: rewrite from the record as read, and move the marker

  @Test
  void pickingIntoLowStock_rewritesTheRecordAsRead_andPutsItsMarker() {
    List<TransactWriteItem> items = changes.change(read(12, 10, 0), -5, 0, NOW);

    Update update = items.get(0).update();
    assertThat(update.updateExpression()).isEqualTo("SET #q = :q_after, #rs = :rs_after, #av = :av_after, #ut = :now, " + StockChanges.COUNT_WRITE);
    assertThat(update.expressionAttributeValues()).containsEntry(":q_after", n(7)).containsEntry(":rs_after", n(0))
        .containsEntry(":av_after", n(7));
    assertAsRead(update, 12, 0);
    assertThat(items).hasSize(2);
    assertThat(items.get(1).put().item()).containsAllEntriesOf(marker(7).attributes())
        .containsEntry("quantity", n(7)).containsEntry("available", n(7));
  }

  @Test
  void receivingOutOfLowStock_deletesItsMarker() {
    List<TransactWriteItem> items = changes.change(read(5, 10, 0), 20, 0, NOW);

    assertAsRead(items.get(0).update(), 5, 0);
    assertThat(items).hasSize(2);
    assertThat(items.get(1).delete().key()).isEqualTo(marker(5).attributes());
  }

  @Test
  void pickingWithinLowStock_movesTheMarkerToItsNewCount() {
    List<TransactWriteItem> items = changes.change(read(5, 10, 0), -1, 0, NOW);

    assertThat(items).hasSize(3);
    assertThat(items.get(1).delete().key()).isEqualTo(marker(5).attributes());
    assertThat(items.get(2).put().item()).containsAllEntriesOf(marker(4).attributes());
  }

  @Test
  void changeWithinLowStockThatKeepsTheAvailableCount_rewritesTheMarkerInPlace() {
    // Two more on hand, both reserved: the marker's key (its available count) stays, its values change.
    List<TransactWriteItem> items = changes.change(read(5, 10, 0), 2, 2, NOW);

    assertThat(items).hasSize(2);
    assertThat(items.get(1).put().item()).containsAllEntriesOf(marker(5).attributes())
        .containsEntry("quantity", n(7)).containsEntry("reserved", n(2));
  }

  @Test
  void recordFromBeforeReservations_isRewrittenWhole_evenClearOfTheReorderPoint() {
    StockChanges.Read old = new StockChanges.Read(new ProductInventory("p1", "w1", 100, 10, READ_AT, 0), false);

    Update update = changes.change(old, -5, 0, NOW).get(0).update();

    // Adding to an available count it does not store would create one of just the delta.
    assertThat(update.updateExpression()).isEqualTo("SET #q = :q_after, #rs = :rs_after, #av = :av_after, #ut = :now, " + StockChanges.COUNT_WRITE);
    assertThat(update.conditionExpression()).isEqualTo(
        "#q = :before AND #ut = :read_at AND attribute_not_exists(#av) AND attribute_not_exists(#ver)");
  }

  @Test
  void aWriteAsRead_isConditionedOnTheWriteCountRead_notOnlyOnTheTime() {
    // Two processes can write one record in the same millisecond: a lock that only the update time
    // guarded let a stale snapshot's write through (the exploration's seed 7 found it). The count cannot repeat.
    StockChanges.Read counted = new StockChanges.Read(new ProductInventory("p1", "w1", 12, 10, READ_AT, 0), true, 7);

    Update update = changes.change(counted, -5, 0, NOW).get(0).update();

    assertThat(update.conditionExpression()).endsWith(" AND #ver = :ver_read");
    assertThat(update.expressionAttributeValues()).containsEntry(":ver_read", n(7));
    assertThat(update.updateExpression()).endsWith(", " + StockChanges.COUNT_WRITE);
    assertThat(changes.change(read(100, 10, 0), -5, 0, NOW).get(0).update().updateExpression())
        .as("adding to a record counts the write too, so an ABA of its units cannot hide it")
        .endsWith(", " + StockChanges.COUNT_WRITE);
  }

  // Every request DynamoDB accepts

  @Test
  void everyChange_definesEachPlaceholderItUses_andUsesEachItDefines() {
    // DynamoDB refuses an expression with an undefined placeholder, and a request defining an unused one.
    long[][] cases = {
        // quantity, reorder point, reserved, quantity delta, reserved delta
        {100, 10, 0, -5, 0}, {100, 10, 0, 5, 0}, {100, 10, 4, 0, 3}, {100, 10, 4, 0, -3}, {100, 10, 4, 0, 0},
        {100, 0, 0, -1, 0}, {100, 10, 4, 2, 2}, {100, 10, 4, -2, -2}, {12, 10, 0, -5, 0}, {5, 10, 0, 20, 0},
        {5, 10, 0, -1, 0}, {5, 10, 0, 2, 2}, {5, 10, 3, 0, -3}, {0, 0, 0, 3, 0}, {3, 0, 0, -3, 0}};
    for (long[] c : cases) {
      for (boolean storesAvailable : new boolean[] {true, false}) {
        if (!storesAvailable && c[2] != 0) {
          continue; // a record from before reservations has nothing reserved
        }
        StockChanges.Read read = new StockChanges.Read(new ProductInventory("p1", "w1", c[0], c[1], READ_AT, c[2]),
            storesAvailable);
        Update update = changes.change(read, c[3], c[4], NOW).get(0).update();
        String expressions = update.updateExpression() + " " + update.conditionExpression();
        String what = java.util.Arrays.toString(c) + (storesAvailable ? "" : " from before reservations");
        assertThat(update.expressionAttributeNames().keySet()).as(what).isEqualTo(placeholders(NAME, expressions));
        assertThat(update.expressionAttributeValues().keySet()).as(what).isEqualTo(placeholders(VALUE, expressions));
      }
    }
  }

  // Split over buckets: the sum decides the marker

  /** Stock split over 3 buckets holding {@code available} units each (none reserved), reorder point 5. */
  private static SplitStock split(long... available) {
    List<java.util.Optional<StockChanges.Read>> buckets = new java.util.ArrayList<>();
    for (long a : available) {
      buckets.add(java.util.Optional.of(new StockChanges.Read(
          new ProductInventory("p1", "w1", a, 5, READ_AT, 0, available.length), true)));
    }
    return new SplitStock(buckets, available.length);
  }

  @Test
  void aBucketClearOfTheWholeReorderPoint_isChangedAlone_whateverTheOthersHold() {
    // Bucket 1 keeps more than the reorder point of 5 by itself: so does the sum, before and after.
    List<TransactWriteItem> items = changes.change(split(0, 9, 0),
        new java.util.TreeMap<>(java.util.Map.of(1, new StockChanges.Delta(0, 3))), NOW);

    assertThat(items).singleElement().satisfies(item -> {
      assertThat(item.update().key()).isEqualTo(InventoryKeys.stockBucket("p1", "w1", 1).attributes());
      assertThat(item.update().updateExpression()).isEqualTo("SET #rs = #rs + :dr, #av = #av + :da, #ut = :now, " + StockChanges.COUNT_WRITE);
    });
  }

  @Test
  void aBucketNearTheReorderPoint_isWrittenAsRead_withTheRecordAsItsLock_andTheMarkerByTheSum() {
    // Bucket 2 at 4: at the reorder point by itself, so the sum (12 → 10) decides; not low either side.
    List<TransactWriteItem> clear = changes.change(split(4, 4, 4),
        new java.util.TreeMap<>(java.util.Map.of(2, new StockChanges.Delta(-2, 0))), NOW);
    assertThat(clear).extracting(i -> i.update().key()).containsExactly(
        InventoryKeys.stock("p1", "w1").attributes(), InventoryKeys.stockBucket("p1", "w1", 2).attributes());
    assertAsRead(clear.get(0).update(), 4, 0);
    assertThat(clear.get(0).update().expressionAttributeValues()).as("the record's units stay").containsEntry(":q_after", n(4));
    assertThat(clear.get(1).update().expressionAttributeValues()).containsEntry(":q_after", n(2));

    // 6 → 3 over the three: the sum crosses the reorder point, so the sum's marker is put.
    List<TransactWriteItem> low = changes.change(split(2, 2, 2),
        new java.util.TreeMap<>(java.util.Map.of(0, new StockChanges.Delta(-1, 0), 1, new StockChanges.Delta(-2, 0))), NOW);
    assertThat(low).hasSize(3);
    assertThat(low.get(2).put().item()).containsEntry("available", n(3)).containsEntry("quantity", n(3));
    assertThat(TableKey.of(low.get(2).put().item())).isEqualTo(marker(3));
    // 3 → 2, low before and after: the marker moves from the sum's old count to its new one.
    List<TransactWriteItem> lower = changes.change(split(1, 1, 1),
        new java.util.TreeMap<>(java.util.Map.of(2, new StockChanges.Delta(-1, 0))), NOW);
    assertThat(lower).hasSize(4);
    assertThat(lower.get(2).delete().key()).isEqualTo(marker(3).attributes());
    assertThat(TableKey.of(lower.get(3).put().item())).isEqualTo(marker(2));
  }

  @Test
  void aMove_addsWhereABucketStaysClear_setsAsReadWhereNot_andNeitherLocksTheRecordNorMovesTheMarker() {
    // 12 from bucket 0 (clear of 5 before and after) into an empty bucket 2: the sum stays 20.
    List<TransactWriteItem> items = changes.move(split(20, 0, 0),
        new java.util.TreeMap<>(java.util.Map.of(0, new StockChanges.Delta(-12, 0), 2, new StockChanges.Delta(12, 0))), NOW);
    assertThat(items).extracting(i -> i.update().key()).containsExactly(
        InventoryKeys.stock("p1", "w1").attributes(), InventoryKeys.stockBucket("p1", "w1", 2).attributes());
    assertThat(items.get(0).update().updateExpression()).startsWith("SET #q = #q + :dq");
    assertAsRead(items.get(1).update(), 0, 0);
  }

  @Test
  void movesEvenTheUnitsOverTheActiveBuckets_andDrainTheOthers() {
    SplitStock whole = new SplitStock(split(9, 0, 1, 4).buckets(), 3);
    assertThat(StockBuckets.moves(whole).values().stream().mapToLong(StockChanges.Delta::quantity).sum()).isZero();
    assertThat(StockBuckets.moves(whole)).containsExactly(
        java.util.Map.entry(0, new StockChanges.Delta(-4, 0)), java.util.Map.entry(1, new StockChanges.Delta(5, 0)),
        java.util.Map.entry(2, new StockChanges.Delta(3, 0)), java.util.Map.entry(3, new StockChanges.Delta(-4, 0)));
    assertThat(StockBuckets.takes(whole, 12)).extracting(t -> t.bucket() + ":" + t.quantity())
        .as("most available first").containsExactly("0:9", "3:3");
  }

  @Test
  void movesNeverMakeOrLoseAUnit_evenWhenTheCountNamesBucketsThatNoLongerExist() {
    // A drop of drained buckets raced a raise: the count says 6, only buckets 0 and 1 exist. Moving each
    // one's sixth of the units out of them, with nowhere to go, would lose two thirds of them.
    SplitStock whole = new SplitStock(split(9, 3).buckets(), 6);
    java.util.SortedMap<Integer, StockChanges.Delta> moves = StockBuckets.moves(whole);
    assertThat(moves.values().stream().mapToLong(StockChanges.Delta::quantity).sum()).isZero();
    assertThat(moves).containsExactly(java.util.Map.entry(0, new StockChanges.Delta(-3, 0)),
        java.util.Map.entry(1, new StockChanges.Delta(3, 0)));
    // W10 raising it to 4 shares them with the buckets it creates: what leaves 0 and 1 is what they get.
    List<Integer> takers = StockBuckets.takers(whole, 4, true);
    assertThat(takers).containsExactly(0, 1, 2, 3);
    long created = StockBuckets.share(12, takers, 2) + StockBuckets.share(12, takers, 3);
    assertThat(StockBuckets.moves(whole, takers).values().stream().mapToLong(StockChanges.Delta::quantity).sum())
        .isEqualTo(-created);
  }

  @Test
  void aHoldNeedingMoreThanOneTransactionsItems_isRefused_withItsReason() {
    DynamoReservationRepository.requireFits("O-1", 100);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> DynamoReservationRepository.requireFits("O-1", 101))
        .isInstanceOfSatisfying(dev.warehouse.runtime.error.FailedPreconditionException.class,
            e -> assertThat(e.reason()).isEqualTo("RESERVATION_TOO_LARGE"));
  }

  private static StockChanges.Read read(long quantity, long reorderPoint, long reserved) {
    return new StockChanges.Read(new ProductInventory("p1", "w1", quantity, reorderPoint, READ_AT, reserved), true);
  }

  private static void assertAsRead(Update update, long quantity, long reserved) {
    assertThat(update.conditionExpression())
        .isEqualTo("#q = :before AND #ut = :read_at AND #rs = :rs_before AND attribute_not_exists(#ver)");
    assertThat(update.expressionAttributeValues()).containsEntry(":before", n(quantity))
        .containsEntry(":rs_before", n(reserved)).containsEntry(":read_at", AttributeValue.fromS(READ_AT.toString()));
  }

  private static Set<String> placeholders(Pattern pattern, String expressions) {
    Set<String> found = new HashSet<>();
    Matcher matcher = pattern.matcher(expressions);
    while (matcher.find()) {
      found.add(matcher.group());
    }
    return found;
  }

  private static AttributeValue n(long value) {
    return AttributeValue.fromN(Long.toString(value));
  }

  private static TableKey marker(long available) {
    return SHARDS.marker("p1", "w1", available);
  }
}
