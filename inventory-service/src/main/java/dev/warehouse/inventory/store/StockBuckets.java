package dev.warehouse.inventory.store;

import static dev.warehouse.inventory.store.InventoryItems.BUCKETS_KEPT;
import static dev.warehouse.inventory.store.InventoryItems.BUCKET_COUNT;
import static dev.warehouse.inventory.store.InventoryItems.QUANTITY;
import static dev.warehouse.inventory.store.InventoryItems.UPDATE_TIME;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.routing.Route;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
import java.util.stream.IntStream;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * Where a product's stock at a warehouse is split over buckets (W10), and the work that keeps them
 * useful: which bucket a hold reads first, the snapshot of all of them that decides OUT_OF_STOCK, and
 * the moves that even them out and drain those above the count, off the request path.
 *
 * <p>Each process remembers the bucket counts it last read; a stale count is safe. A hold that reads a
 * bucket no longer among the N takes from it only if it still has units (it is drained, not deleted,
 * while it holds any), and one that finds its bucket short reads the snapshot, which carries the counts.
 */
public final class StockBuckets {

  /** How long after a change asks for it a rebalance starts, unless configured ({@code STOCK_REBALANCE_DELAY_MS}). */
  public static final Duration DEFAULT_REBALANCE_DELAY = Duration.ofMillis(20);
  /** Rounds of one rebalance (moves, then deletions of drained buckets) before it waits for the next ask. */
  static final int REBALANCE_ROUNDS = 4;

  private final DynamoStore store;
  private final StockChanges changes;
  private final Clock clock;
  private final Duration rebalanceDelay;
  private final IntUnaryOperator chooser;
  private final Map<String, Integer> active = new ConcurrentHashMap<>();
  private final Map<String, Integer> kept = new ConcurrentHashMap<>();
  private final Map<String, Boolean> rebalancing = new ConcurrentHashMap<>();
  /** Holds per stock since {@link #busiestSince()} last took them: which warehouse of a hot product is hot. */
  private volatile Map<String, java.util.concurrent.atomic.LongAdder> holds = new ConcurrentHashMap<>();

  /**
   * @param rebalanceDelay how long after a change asks for it a rebalance starts: the calls of one burst
   *                       ask once ({@code STOCK_REBALANCE_DELAY_MS})
   */
  public StockBuckets(DynamoStore store, StockChanges changes, Clock clock, Duration rebalanceDelay) {
    this(store, changes, clock, rebalanceDelay, n -> ThreadLocalRandom.current().nextInt(n));
  }

  /**
   * @param chooser the bucket a change reads first, given N: uniform at random in service; seeded where a
   *                test replays a schedule
   */
  public StockBuckets(DynamoStore store, StockChanges changes, Clock clock, Duration rebalanceDelay,
      IntUnaryOperator chooser) {
    this.store = store;
    this.changes = changes;
    this.clock = clock;
    this.rebalanceDelay = rebalanceDelay;
    this.chooser = chooser;
  }

  /**
   * Buckets for one repository on its own (tests, tools): the system clock and the default rebalance delay.
   * A service shares one between both repositories ({@code InventoryMain}).
   */
  static StockBuckets standalone(DynamoStore store, LowStockShards lowStock) {
    return new StockBuckets(store, new StockChanges(store.table(), lowStock), Clock.systemUTC(),
        DEFAULT_REBALANCE_DELAY);
  }

  private static String key(String productId, String warehouseId) {
    return productId + "#" + warehouseId;
  }

  /** The bucket a change of this stock reads first: one of the N at random (0 while it is not known to be split). */
  public int choose(String productId, String warehouseId) {
    int n = active.getOrDefault(key(productId, warehouseId), 1);
    return n == 1 ? 0 : chooser.applyAsInt(n);
  }

  /** Counts a hold of this stock, for {@link #busiestSince()}. */
  public void countHold(String productId, String warehouseId) {
    holds.computeIfAbsent(key(productId, warehouseId), k -> new java.util.concurrent.atomic.LongAdder()).increment();
  }

  /**
   * The stock of each product held most since the last call (its warehouse, and its bucket count as last
   * read), by product; and starts counting anew.
   */
  public Map<String, Busiest> busiestSince() {
    Map<String, java.util.concurrent.atomic.LongAdder> counted = holds;
    holds = new ConcurrentHashMap<>();
    Map<String, Busiest> busiest = new java.util.HashMap<>();
    counted.forEach((key, count) -> {
      String productId = key.substring(0, key.indexOf('#'));
      String warehouseId = key.substring(key.indexOf('#') + 1);
      Busiest candidate = new Busiest(warehouseId, count.sum(), active.getOrDefault(key, 1));
      busiest.merge(productId, candidate, (a, b) -> a.holds() >= b.holds() ? a : b);
    });
    return busiest;
  }

  /** A product's most held stock: its warehouse, its holds counted, its bucket count (N) as last read. */
  public record Busiest(String warehouseId, long holds, int bucketCount) {}

  /** Remembers the counts a stock record carries. */
  public void learn(Map<String, AttributeValue> record) {
    ProductInventory stock = InventoryItems.toProductInventory(record);
    String key = key(stock.productId(), stock.warehouseId());
    active.put(key, stock.bucketCount());
    kept.put(key, InventoryItems.bucketsKept(record));
  }

  /**
   * The whole stock from its record as read: the record alone when it is not split, else one snapshot
   * of every bucket (TransactGetItems). Empty when there is no record.
   */
  public CompletableFuture<Optional<SplitStock>> whole(Route route, String productId, String warehouseId,
      Optional<Map<String, AttributeValue>> record) {
    if (record.isEmpty()) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    learn(record.get());
    int k = InventoryItems.bucketsKept(record.get());
    return k == 1
        ? CompletableFuture.completedFuture(Optional.of(SplitStock.whole(StockChanges.Read.of(record.get()))))
        : snapshot(route, productId, warehouseId, k);
  }

  /**
   * One consistent snapshot of every bucket, {@code k} as last known; read again with the record's count
   * when it says more exist. Empty when there is no record.
   */
  public CompletableFuture<Optional<SplitStock>> snapshot(Route route, String productId, String warehouseId, int k) {
    List<TableKey> keys = IntStream.range(0, k).mapToObj(b -> InventoryKeys.stockBucket(productId, warehouseId, b)).toList();
    return store.transactGet(route, keys).thenCompose(items -> {
      if (items.get(0).isEmpty()) {
        return CompletableFuture.completedFuture(Optional.empty());
      }
      learn(items.get(0));
      int recorded = InventoryItems.bucketsKept(items.get(0));
      if (recorded > k) {
        return snapshot(route, productId, warehouseId, recorded);
      }
      return CompletableFuture.completedFuture(Optional.of(SplitStock.of(items.subList(0, Math.max(1, recorded)))));
    });
  }

  /** The snapshot, with the bucket count this process last knew. */
  public CompletableFuture<Optional<SplitStock>> snapshot(Route route, String productId, String warehouseId) {
    return snapshot(route, productId, warehouseId, kept.getOrDefault(key(productId, warehouseId), 1));
  }

  /**
   * Where {@code units} are taken from {@code whole}: the buckets with the most available first, so a
   * line larger than any one bucket spans several (in the same transaction). The caller checked the sum.
   */
  static List<ReservationLine.Take> takes(SplitStock whole, long units) {
    List<ReservationLine.Take> takes = new ArrayList<>();
    long left = units;
    List<Integer> byAvailable = IntStream.range(0, whole.kept()).boxed()
        .filter(b -> whole.bucket(b).isPresent())
        .sorted(Comparator.comparingLong((Integer b) -> -whole.bucket(b).orElseThrow().stock().available()))
        .toList();
    for (int b : byAvailable) {
      long take = Math.min(left, whole.bucket(b).orElseThrow().stock().available());
      if (take > 0) {
        takes.add(new ReservationLine.Take(b, take));
        left -= take;
      }
      if (left == 0) {
        break;
      }
    }
    return takes;
  }

  // --------------------------------------------------------------------------------------- rebalance

  /**
   * Evens the available units of this stock out over its N buckets, drains those above N, and deletes
   * the drained ones that hold nothing, after the rebalance delay, once however often it is asked
   * meanwhile. Best effort: a round that loses a race ends it, and the next ask starts again.
   */
  public void rebalanceSoon(String productId, String warehouseId) {
    String key = key(productId, warehouseId);
    if (rebalancing.putIfAbsent(key, Boolean.TRUE) != null) {
      return;
    }
    CompletableFuture.delayedExecutor(rebalanceDelay.toMillis(), TimeUnit.MILLISECONDS).execute(() ->
        rebalance(productId, warehouseId, 1).whenComplete((ok, failure) -> rebalancing.remove(key)));
  }

  /** Rounds of {@link #rebalanceSoon}: completes when the buckets are even and drained, or a round failed. */
  public CompletableFuture<Void> rebalance(String productId, String warehouseId, int round) {
    Route route = InventoryKeys.SET_STOCK_BUCKETS;
    return snapshot(route, productId, warehouseId)
        .thenCompose(found -> {
          if (found.isEmpty() || !found.get().split()) {
            return CompletableFuture.completedFuture(false);
          }
          SplitStock whole = found.get();
          Instant now = clock.instant();
          SortedMap<Integer, StockChanges.Delta> moves = moves(whole);
          if (!moves.isEmpty()) {
            return store.transact("RebalanceStock", route, changes.move(whole, moves, now), failed -> false)
                .thenApply(ok -> true);
          }
          List<TransactWriteItem> drop = drainedBuckets(whole);
          return drop.isEmpty()
              ? CompletableFuture.completedFuture(false)
              : store.transact("DropStockBuckets", route, drop, failed -> false).thenApply(ok -> true);
        })
        .handle((changed, failure) -> failure == null && changed && round < REBALANCE_ROUNDS)
        .thenCompose(again -> again ? rebalance(productId, warehouseId, round + 1) : CompletableFuture.completedFuture(null));
  }

  /** Moves of available units (quantity with them) so that the N buckets share them evenly and the rest hold none. */
  static SortedMap<Integer, StockChanges.Delta> moves(SplitStock whole) {
    return moves(whole, takers(whole, whole.active(), false));
  }

  /**
   * The buckets that take a share of the available units: those below {@code count} that exist, and, when
   * W10 is {@code creating} them, those from the last that exists up to {@code count}; bucket 0 alone when
   * none would. Units only ever move among buckets that exist or are created in the same transaction.
   */
  static List<Integer> takers(SplitStock whole, int count, boolean creating) {
    List<Integer> takers = IntStream.range(0, count)
        .filter(b -> whole.bucket(b).isPresent() || creating && b >= whole.kept()).boxed().toList();
    return takers.isEmpty() ? List.of(0) : takers;
  }

  /**
   * Moves of the available units of the buckets that exist so that {@code takers} share them evenly
   * ({@link #share}) and every other bucket holds none. The deltas of the buckets that exist, plus the
   * shares of takers that do not (W10 creates them), sum to nothing: no unit is made or lost.
   */
  static SortedMap<Integer, StockChanges.Delta> moves(SplitStock whole, List<Integer> takers) {
    long available = available(whole);
    SortedMap<Integer, StockChanges.Delta> moves = new TreeMap<>();
    for (int b = 0; b < whole.kept(); b++) {
      Optional<StockChanges.Read> bucket = whole.bucket(b);
      if (bucket.isEmpty()) {
        continue;
      }
      long delta = share(available, takers, b) - bucket.get().stock().available();
      if (delta != 0) {
        moves.put(b, new StockChanges.Delta(delta, 0));
      }
    }
    return moves;
  }

  /** The available units of every bucket of {@code whole}. */
  static long available(SplitStock whole) {
    return whole.buckets().stream().flatMap(Optional::stream).mapToLong(r -> r.stock().available()).sum();
  }

  /** Bucket {@code b}'s even share of {@code available} units over {@code takers}; none when it is not one. */
  static long share(long available, List<Integer> takers, int b) {
    int i = takers.indexOf(b);
    return i < 0 ? 0 : available / takers.size() + (i < available % takers.size() ? 1 : 0);
  }

  /**
   * The deletion of the drained buckets at the top (above N, holding nothing), each conditioned on
   * being as read, with the record's count of buckets kept lowered to match; empty when none is.
   */
  private List<TransactWriteItem> drainedBuckets(SplitStock whole) {
    ProductInventory record = whole.record().stock();
    int newKept = whole.kept();
    // Never below the count: with the count read as a condition below, a raise meanwhile stops the drop.
    while (newKept > Math.max(1, whole.active())
        && whole.bucket(newKept - 1).map(r -> r.stock().quantity() == 0).orElse(true)) {
      newKept--;
    }
    if (newKept == whole.kept()) {
      return List.of();
    }
    List<TransactWriteItem> items = new ArrayList<>();
    Map<String, String> names = new HashMap<>(Map.of("#bk", BUCKETS_KEPT, "#bc", BUCKET_COUNT));
    Map<String, AttributeValue> values = new HashMap<>(Map.of(":kept", AttributeValue.fromN(Integer.toString(whole.kept())),
        ":count", AttributeValue.fromN(Integer.toString(whole.active()))));
    StockChanges.countWrite(names, values);
    String update;
    if (newKept == 1) {
      update = "SET " + StockChanges.COUNT_WRITE + " REMOVE #bk, #bc"; // one bucket again: the record is plain stock
    } else {
      values.put(":now_kept", AttributeValue.fromN(Integer.toString(newKept)));
      update = "SET #bk = :now_kept, " + StockChanges.COUNT_WRITE;
    }
    TableKey recordKey = InventoryKeys.stock(record.productId(), record.warehouseId());
    items.add(TransactWriteItem.builder().update(u -> u.tableName(store.table()).key(recordKey.attributes())
        .updateExpression(update).conditionExpression("#bk = :kept AND #bc = :count")
        .expressionAttributeNames(names).expressionAttributeValues(values)).build());
    for (int b = newKept; b < whole.kept(); b++) {
      Optional<StockChanges.Read> bucket = whole.bucket(b);
      if (bucket.isEmpty()) {
        continue;
      }
      TableKey key = InventoryKeys.stockBucket(record.productId(), record.warehouseId(), b);
      String readAt = bucket.get().stock().updateTime().toString();
      items.add(TransactWriteItem.builder().delete(d -> d.tableName(store.table()).key(key.attributes())
          .conditionExpression("#q = :zero AND #ut = :read_at")
          .expressionAttributeNames(Map.of("#q", QUANTITY, "#ut", UPDATE_TIME))
          .expressionAttributeValues(Map.of(":zero", AttributeValue.fromN("0"), ":read_at", AttributeValue.fromS(readAt))))
          .build());
    }
    return items;
  }
}
