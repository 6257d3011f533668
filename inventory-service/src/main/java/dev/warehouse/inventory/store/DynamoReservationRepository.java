package dev.warehouse.inventory.store;

import static dev.warehouse.runtime.dynamo.SingleTable.GSI1;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_PK;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_SK;
import static dev.warehouse.runtime.dynamo.SingleTable.PK;

import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.domain.OutOfStockException;
import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.Reservation.ReleaseCause;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.inventory.domain.ReservationChangedException;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.domain.ReservationRepository;
import dev.warehouse.runtime.dynamo.ConditionFailedException;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.routing.Route;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * {@link ReservationRepository} on the single table. Every write that moves stock is one transaction of
 * the reservation, conditioned on the state it was read in, and of each line's stock record (with its
 * low-stock marker): whichever call wins the reservation's condition moves the stock, and every other
 * one fails as a whole. A transaction that lost only on a stock record (another order's hold changed it)
 * is sent again on the record read anew, here; one that lost on the reservation reaches the caller as
 * {@link ReservationChangedException}, with the reservation as it was found.
 */
public final class DynamoReservationRepository implements ReservationRepository {

  /** Rounds of a write whose stock records keep changing, before ABORTED CONCURRENT_UPDATE. */
  static final int ROUNDS = 16;
  /** The reservation is the first item of every transaction here; the stock records follow. */
  private static final int RESERVATION = 0;

  /** DynamoDB's limit on the items of one transaction. */
  static final int MAX_TRANSACTION_ITEMS = 100;

  private final DynamoStore store;
  private final StockChanges changes;
  private final StockBuckets buckets;

  /** With buckets of its own: for tests and tools that run one repository. */
  public DynamoReservationRepository(DynamoStore store, LowStockShards lowStock) {
    this(store, lowStock, StockBuckets.standalone(store, lowStock));
  }

  public DynamoReservationRepository(DynamoStore store, LowStockShards lowStock, StockBuckets buckets) {
    this.store = store;
    this.changes = new StockChanges(store.table(), lowStock);
    this.buckets = buckets;
  }

  @Override
  public CompletableFuture<Optional<Reservation>> find(String orderId, boolean consistentRead) {
    return store.get(InventoryKeys.GET_RESERVATION, InventoryKeys.reservation(orderId), consistentRead,
        ReservationItems::toReservation);
  }

  // ---------------------------------------------------------------------------------------------- W6

  @Override
  public CompletableFuture<Reservation> hold(Reservation held) {
    return holdRound(held, 1);
  }

  private CompletableFuture<Reservation> holdRound(Reservation held, int round) {
    Route route = InventoryKeys.RESERVE_STOCK;
    // One bucket per line, at random among a split stock's (its record otherwise): the first read.
    List<Integer> chosen = held.lines().stream().map(l -> buckets.choose(l.productId(), l.warehouseId())).toList();
    List<TableKey> keys = IntStream.range(0, chosen.size())
        .mapToObj(i -> InventoryKeys.stockBucket(held.lines().get(i).productId(), held.lines().get(i).warehouseId(), chosen.get(i)))
        .toList();
    // Issued at once, in the route's order: a replay is answered from the reservation found, never from
    // stock that its own hold has since taken.
    CompletableFuture<Optional<Reservation>> existing = store.get(route, InventoryKeys.reservation(held.orderId()), true,
        ReservationItems::toReservation);
    CompletableFuture<Map<TableKey, Map<String, AttributeValue>>> stock = store.batchGet(route, keys, true);
    return existing.thenCombine(stock, (found, records) -> {
          if (found.isPresent()) {
            throw new ReservationChangedException(held.orderId(), found);
          }
          return records;
        })
        .thenCompose(records -> holdItems(held, chosen, keys, records))
        .thenCompose(hold -> store.transact("ReserveStock", route, hold.items(),
                failed -> failed.failed(RESERVATION) && isReplay(held, failed.item(RESERVATION)))
            .thenApply(ok -> {
              hold.reservation().lines().forEach(l -> buckets.countHold(l.productId(), l.warehouseId()));
              return hold.reservation();
            })
            .exceptionallyCompose(failure -> {
              Throwable cause = Failures.cause(failure);
              if (cause instanceof ConditionFailedException failed && failed.failed(RESERVATION)) {
                // A duplicate (or a release's tombstone) was written meanwhile.
                throw new ReservationChangedException(held.orderId(),
                    Optional.of(ReservationItems.toReservation(failed.item(RESERVATION))));
              }
              requireAnotherRound(cause, round);
              return holdRound(held, round + 1);
            }));
  }

  private static boolean isReplay(Reservation wanted, Map<String, AttributeValue> item) {
    return !item.isEmpty() && ReservationItems.toReservation(item).isReplayOf(wanted);
  }

  /** A W6 transaction and the reservation it writes (its lines with where their units come from). */
  private record Hold(List<TransactWriteItem> items, Reservation reservation) {}

  /**
   * The W6 transaction: the reservation, then per line its stock's changes. A line whose bucket read
   * first has its units, clear of the reorder point, takes them there; any other reads the whole stock
   * (its snapshot) and takes from the buckets that have most. OUT_OF_STOCK only when a whole stock is
   * short, never because one bucket is.
   */
  private CompletableFuture<Hold> holdItems(Reservation wanted, List<Integer> chosen, List<TableKey> keys,
      Map<TableKey, Map<String, AttributeValue>> records) {
    Instant now = wanted.updateTime();
    List<CompletableFuture<LineHold>> lines = new ArrayList<>();
    for (int i = 0; i < wanted.lines().size(); i++) {
      ReservationLine line = wanted.lines().get(i);
      int bucket = chosen.get(i);
      Optional<Map<String, AttributeValue>> item = Optional.ofNullable(records.get(keys.get(i)));
      if (bucket == 0) {
        lines.add(buckets.whole(InventoryKeys.RESERVE_STOCK, line.productId(), line.warehouseId(), item)
            .thenApply(whole -> lineHold(line, whole, now)));
        continue;
      }
      Optional<TransactWriteItem> fast = item.map(StockChanges.Read::of)
          .filter(read -> read.stock().available() >= line.quantity())
          .flatMap(read -> changes.fast(bucket, read, new StockChanges.Delta(0, line.quantity()), now));
      lines.add(fast.isPresent()
          ? CompletableFuture.completedFuture(new LineHold(line.takenFrom(List.of(new ReservationLine.Take(bucket, line.quantity()))),
              List.of(fast.get()), Optional.empty()))
          : buckets.snapshot(InventoryKeys.RESERVE_STOCK, line.productId(), line.warehouseId())
              .thenApply(whole -> lineHold(line, whole, now)));
    }
    return CompletableFuture.allOf(lines.toArray(CompletableFuture[]::new)).thenApply(done -> {
      List<OutOfStockException.Shortage> shortLines = new ArrayList<>();
      List<TransactWriteItem> items = new ArrayList<>();
      items.add(null); // the reservation, once its lines say where their units come from
      List<ReservationLine> held = new ArrayList<>();
      for (CompletableFuture<LineHold> f : lines) {
        LineHold line = f.join();
        line.shortage().ifPresent(shortLines::add);
        items.addAll(line.items());
        held.add(line.line());
      }
      if (!shortLines.isEmpty()) {
        throw new OutOfStockException(wanted.orderId(), wanted.lines().size(), shortLines);
      }
      requireFits(wanted.orderId(), items.size());
      Reservation reservation = wanted.withLines(held);
      items.set(RESERVATION, TransactWriteItem.builder().put(p -> p
          .tableName(store.table())
          .item(ReservationItems.held(reservation))
          .conditionExpression("attribute_not_exists(#pk)")
          .expressionAttributeNames(Map.of("#pk", PK))
          .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
          .build());
      return new Hold(items, reservation);
    });
  }

  /** One line's part of a hold: the line with its takes and its items, or its shortage. */
  private record LineHold(ReservationLine line, List<TransactWriteItem> items, Optional<OutOfStockException.Shortage> shortage) {}

  /** A line held from its whole stock (the record, or a split stock's snapshot; NOT_FOUND when there is none). */
  private LineHold lineHold(ReservationLine line, Optional<SplitStock> found, Instant now) {
    SplitStock whole = found.orElseThrow(() -> InventoryService.inventoryNotFound(line.productId(), line.warehouseId()));
    long available = whole.sum().available();
    if (available < line.quantity()) {
      return new LineHold(line, List.of(), Optional.of(
          new OutOfStockException.Shortage(line.productId(), line.warehouseId(), line.quantity(), available)));
    }
    List<ReservationLine.Take> takes = StockBuckets.takes(whole, line.quantity());
    SortedMap<Integer, StockChanges.Delta> deltas = new TreeMap<>();
    takes.forEach(t -> deltas.put(t.bucket(), new StockChanges.Delta(0, t.quantity())));
    if (whole.split()) {
      buckets.rebalanceSoon(line.productId(), line.warehouseId()); // its first bucket was short: even them out
    }
    return new LineHold(line.takenFrom(takes), changes.change(whole, deltas, now), Optional.empty());
  }

  /**
   * Returns when a transaction of {@code items} fits DynamoDB's limit of 100; else FAILED_PRECONDITION
   * RESERVATION_TOO_LARGE (only an order of many lines of split stock near its reorder point reaches it).
   */
  static void requireFits(String orderId, int items) {
    if (items > MAX_TRANSACTION_ITEMS) {
      throw new FailedPreconditionException("RESERVATION_TOO_LARGE",
          "order " + orderId + "'s lines need " + items + " items in one transaction, over the database's "
              + MAX_TRANSACTION_ITEMS + ": hold fewer lines of split stock at once",
          Map.of("order_id", orderId, "items", Integer.toString(items)));
    }
  }

  // ---------------------------------------------------------------------------------------------- W7

  @Override
  public CompletableFuture<Reservation> confirm(String orderId, Instant now) {
    UpdateItemRequest update = UpdateItemRequest.builder()
        .key(InventoryKeys.reservation(orderId).attributes())
        .updateExpression("SET #st = :confirmed, #ut = :now REMOVE #gpk, #gsk")
        .conditionExpression("#st = :held")
        .expressionAttributeNames(Map.of("#st", ReservationItems.STATE, "#ut", ReservationItems.UPDATE_TIME,
            "#gpk", GSI1_PK, "#gsk", GSI1_SK))
        .expressionAttributeValues(Map.of(":confirmed", AttributeValue.fromS(State.CONFIRMED.name()),
            ":held", AttributeValue.fromS(State.HELD.name()), ":now", AttributeValue.fromS(now.toString())))
        .build();
    return store.update(InventoryKeys.CONFIRM_RESERVATION, update)
        .thenApply(ReservationItems::toReservation)
        .exceptionally(failure -> {
          Throwable cause = Failures.cause(failure);
          if (cause instanceof ConditionFailedException failed) {
            Map<String, AttributeValue> old = failed.item(RESERVATION);
            throw new ReservationChangedException(orderId,
                old.isEmpty() ? Optional.empty() : Optional.of(ReservationItems.toReservation(old)));
          }
          throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
        });
  }

  // ------------------------------------------------------------------------------------------ W8, W9

  @Override
  public CompletableFuture<Reservation> end(Reservation current, Reservation next) {
    return endRound(current, next, 1);
  }

  private CompletableFuture<Reservation> endRound(Reservation current, Reservation next, int round) {
    boolean shipped = next.state() == State.COMMITTED;
    Route route = shipped ? InventoryKeys.COMMIT_RESERVATION : InventoryKeys.RELEASE_RESERVATION;
    String operation = shipped ? "CommitReservation"
        : next.releaseCause().orElse(null) == ReleaseCause.HOLD_EXPIRED ? "ExpireHold" : "ReleaseReservation";
    List<TableKey> keys = current.lines().stream()
        .flatMap(l -> l.takesOrWhole().stream().map(t -> InventoryKeys.stockBucket(l.productId(), l.warehouseId(), t.bucket())))
        .toList();
    return store.batchGet(route, keys, true)
        .thenCompose(records -> {
          List<CompletableFuture<List<TransactWriteItem>>> lines = new ArrayList<>();
          for (ReservationLine line : current.lines()) {
            SortedMap<Integer, StockChanges.Delta> deltas = new TreeMap<>();
            List<TransactWriteItem> fast = new ArrayList<>();
            Map<String, AttributeValue> record = null;
            for (ReservationLine.Take take : line.takesOrWhole()) {
              Map<String, AttributeValue> item = records.get(InventoryKeys.stockBucket(line.productId(), line.warehouseId(), take.bucket()));
              if (item == null) {
                throw InventoryService.inventoryNotFound(line.productId(), line.warehouseId());
              }
              StockChanges.Read read = StockChanges.Read.of(item);
              if (read.stock().reserved() < take.quantity()) {
                // Read apart from the reservation: a racing call gave these units back after it was read.
                return reservationAsNow(route, current).thenCompose(now -> endRound(current, next, nextRound(round)));
              }
              StockChanges.Delta delta = new StockChanges.Delta(shipped ? -take.quantity() : 0, -take.quantity());
              deltas.put(take.bucket(), delta);
              changes.fast(take.bucket(), read, delta, next.updateTime()).ifPresent(fast::add);
              record = take.bucket() == 0 ? item : record;
            }
            if (fast.size() == deltas.size()) {
              lines.add(CompletableFuture.completedFuture(fast));
              if (deltas.lastKey() > 0) {
                buckets.rebalanceSoon(line.productId(), line.warehouseId()); // units back in a bucket: even or drain
              }
              continue;
            }
            // Near the reorder point: the whole stock, as read, and its marker by the sum.
            CompletableFuture<Optional<SplitStock>> whole = record != null && InventoryItems.bucketsKept(record) == 1
                ? CompletableFuture.completedFuture(Optional.of(SplitStock.whole(StockChanges.Read.of(record))))
                : buckets.snapshot(route, line.productId(), line.warehouseId());
            lines.add(whole.thenApply(w -> changes.change(w.orElseThrow(
                () -> InventoryService.inventoryNotFound(line.productId(), line.warehouseId())), deltas, next.updateTime())));
          }
          return CompletableFuture.allOf(lines.toArray(CompletableFuture[]::new)).thenCompose(done -> {
            List<TransactWriteItem> items = new ArrayList<>();
            items.add(stateChange(current, next));
            lines.forEach(l -> items.addAll(l.join()));
            requireFits(current.orderId(), items.size());
            return store.transact(operation, route, items, failed -> false)
                .thenApply(ok -> next)
                .exceptionallyCompose(failure -> {
                  Throwable cause = Failures.cause(failure);
                  if (cause instanceof ConditionFailedException failed && failed.failed(RESERVATION)) {
                    Map<String, AttributeValue> old = failed.item(RESERVATION);
                    throw new ReservationChangedException(current.orderId(),
                        old.isEmpty() ? Optional.empty() : Optional.of(ReservationItems.toReservation(old)));
                  }
                  requireAnotherRound(cause, round);
                  return endRound(current, next, round + 1);
                });
          });
        });
  }

  /**
   * Completes when the reservation is still as {@code current} was read (the stock then changed only for
   * others); fails with {@link ReservationChangedException} when it is not.
   */
  private CompletableFuture<Reservation> reservationAsNow(Route route, Reservation current) {
    return store.get(route, InventoryKeys.reservation(current.orderId()), true, ReservationItems::toReservation)
        .thenApply(found -> {
          if (found.isEmpty() || found.get().state() != current.state()) {
            throw new ReservationChangedException(current.orderId(), found);
          }
          return found.get();
        });
  }

  @Override
  public CompletableFuture<Reservation> tombstone(Reservation tombstone) {
    TransactWriteItem put = TransactWriteItem.builder().put(p -> p
        .tableName(store.table())
        .item(ReservationItems.tombstone(tombstone))
        .conditionExpression("attribute_not_exists(#pk)")
        .expressionAttributeNames(Map.of("#pk", PK))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
    return store.transact("ReleaseReservation", InventoryKeys.RELEASE_RESERVATION, List.of(put), failed -> false)
        .thenApply(ok -> tombstone)
        .exceptionally(failure -> {
          Throwable cause = Failures.cause(failure);
          if (cause instanceof ConditionFailedException failed && failed.failed(RESERVATION)) {
            throw new ReservationChangedException(tombstone.orderId(),
                Optional.of(ReservationItems.toReservation(failed.item(RESERVATION))));
          }
          throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
        });
  }

  // ---------------------------------------------------------------------------------------------- A9

  @Override
  public CompletableFuture<Page<Reservation>> listExpiredHolds(PageQuery page, Instant now) {
    Route route = InventoryKeys.EXPIRED_HOLDS;
    int shards = route.fanOut().orElseThrow().shardCount();
    List<QueryRequest> queries = IntStream.range(0, shards)
        .mapToObj(shard -> QueryRequest.builder()
            .indexName(GSI1)
            .keyConditionExpression("#pk = :pk AND #sk BETWEEN :from AND :to")
            .expressionAttributeNames(Map.of("#pk", GSI1_PK, "#sk", GSI1_SK))
            .expressionAttributeValues(Map.of(
                ":pk", AttributeValue.fromS(InventoryKeys.holdsGsiPk(shard)),
                ":from", AttributeValue.fromS(InventoryKeys.holdsPrefix()),
                ":to", AttributeValue.fromS(InventoryKeys.holdsExpiredBy(now))))
            .build())
        .toList();
    String scope = route.patternId() + "|shards=" + shards;
    return store.queryShards(route, DynamoStore.ShardKeys.GSI1, queries, page.pageSize(), page.pageToken(), scope,
        ReservationItems::toReservation);
  }

  // ------------------------------------------------------------------------------------------ shared

  /**
   * The update of a reservation from {@code current}'s state to {@code next}'s, conditioned on the state
   * read: of two calls that read the same state, one wins and the other's whole transaction fails.
   */
  private TransactWriteItem stateChange(Reservation current, Reservation next) {
    Map<String, String> names = new HashMap<>(Map.of("#st", ReservationItems.STATE, "#ut", ReservationItems.UPDATE_TIME,
        "#ea", SingleTable.EXPIRE_AT, "#gpk", GSI1_PK, "#gsk", GSI1_SK));
    Map<String, AttributeValue> values = new HashMap<>(Map.of(
        ":read", AttributeValue.fromS(current.state().name()),
        ":next", AttributeValue.fromS(next.state().name()),
        ":now", AttributeValue.fromS(next.updateTime().toString()),
        ":ea", ReservationItems.expireAt(next.updateTime())));
    String set = "SET #st = :next, #ut = :now, #ea = :ea";
    if (next.releaseCause().isPresent()) {
      names.put("#rc", ReservationItems.RELEASE_CAUSE);
      values.put(":rc", AttributeValue.fromS(next.releaseCause().get().name()));
      set += ", #rc = :rc";
    }
    String update = set + " REMOVE #gpk, #gsk";
    return TransactWriteItem.builder().update(u -> u
        .tableName(store.table())
        .key(InventoryKeys.reservation(current.orderId()).attributes())
        .updateExpression(update)
        .conditionExpression("#st = :read")
        .expressionAttributeNames(names)
        .expressionAttributeValues(values)
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
  }

  private static int nextRound(int round) {
    if (round >= ROUNDS) {
      throw concurrentUpdate();
    }
    return round + 1;
  }

  /**
   * Returns when a round failed because a stock record changed meanwhile (a condition) or a conflicting
   * transaction outlasted the data layer's retries, and another round may run; throws otherwise. Every
   * round reads the stock again, so repeating one never applies a change twice.
   */
  private static void requireAnotherRound(Throwable cause, int round) {
    boolean changed = cause instanceof ConditionFailedException
        || cause instanceof AbortedException aborted && aborted.reason().equals("TRANSACTION_CONFLICT");
    if (!changed) {
      throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
    }
    nextRound(round);
  }

  static AbortedException concurrentUpdate() {
    return new AbortedException("CONCURRENT_UPDATE", "the reservation or its stock kept changing concurrently; retry",
        Map.of());
  }
}
