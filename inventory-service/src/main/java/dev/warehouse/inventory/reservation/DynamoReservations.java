package dev.warehouse.inventory.reservation;

import static dev.warehouse.runtime.dynamo.SingleTable.GSI1;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_PK;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_SK;
import static dev.warehouse.runtime.dynamo.SingleTable.PK;

import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.reservation.Reservation.ReleaseCause;
import dev.warehouse.inventory.reservation.Reservation.State;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.store.StockChanges;
import dev.warehouse.runtime.dynamo.ConditionFailedException;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.PreconditionViolation;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.routing.Route;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Reservations on the single table. Every change of a reservation's state that moves stock is one
 * transaction of the reservation, conditioned on the state it was read in, and of each line's stock
 * (with its low-stock marker): whichever call wins the reservation's condition moves the stock, and
 * every other one fails as a whole. So a reservation's units are taken once and given back once,
 * however often a call is retried or raced (release against release, against the expiry loop,
 * against a confirm).
 */
public final class DynamoReservations {

  /** Read-modify-write rounds of a call whose records keep changing, before ABORTED CONCURRENT_UPDATE. */
  static final int ROUNDS = 16;
  /** The reservation is the first item of every transaction here; the stock records follow. */
  private static final int RESERVATION = 0;

  private final DynamoStore store;
  private final StockChanges changes;

  public DynamoReservations(DynamoStore store, LowStockShards lowStock) {
    this.store = store;
    this.changes = new StockChanges(store.table(), lowStock);
  }

  /** A8: the order's reservation. */
  public CompletableFuture<Optional<Reservation>> find(String orderId, boolean consistentRead) {
    return store.get(InventoryKeys.GET_RESERVATION, InventoryKeys.reservation(orderId), consistentRead,
        ReservationItems::toReservation);
  }

  // ---------------------------------------------------------------------------------------------- W6

  /** W6: holds every line of {@code wanted} (merged), or none. */
  public CompletableFuture<Reservation> reserve(Reservation wanted) {
    return reserveRound(wanted, 1);
  }

  private CompletableFuture<Reservation> reserveRound(Reservation wanted, int round) {
    Route route = InventoryKeys.RESERVE_STOCK;
    // Issued in this order (the route's), at once.
    CompletableFuture<Optional<Reservation>> existing = store.get(route, InventoryKeys.reservation(wanted.orderId()), true,
        ReservationItems::toReservation);
    CompletableFuture<Map<TableKey, Map<String, AttributeValue>>> stock = store.batchGet(route, stockKeys(wanted), true);
    return existing.thenCombine(stock, (found, records) -> {
          if (found.isPresent()) {
            return Optional.<List<TransactWriteItem>>empty();
          }
          return Optional.of(reserveItems(wanted, records));
        })
        .thenCompose(items -> {
          if (items.isEmpty()) {
            return existing.thenApply(found -> found.orElseThrow().answering(wanted));
          }
          return store.transact("ReserveStock", route, items.get(),
                  failed -> failed.failed(RESERVATION) && isReplay(wanted, failed.item(RESERVATION)))
              .thenApply(ok -> wanted)
              .exceptionallyCompose(failure -> {
                Throwable cause = Failures.cause(failure);
                if (cause instanceof ConditionFailedException failed && failed.failed(RESERVATION)) {
                  // A duplicate (or a release's tombstone) was written meanwhile.
                  return CompletableFuture.completedFuture(
                      ReservationItems.toReservation(failed.item(RESERVATION)).answering(wanted));
                }
                requireAnotherRound(cause, round);
                return reserveRound(wanted, round + 1);
              });
        });
  }

  private static boolean isReplay(Reservation wanted, Map<String, AttributeValue> item) {
    if (item.isEmpty()) {
      return false;
    }
    return ReservationItems.toReservation(item).isReplayOf(wanted);
  }

  /** The W6 transaction: the reservation, then per line its stock's update and marker moves; or OUT_OF_STOCK. */
  private List<TransactWriteItem> reserveItems(Reservation wanted, Map<TableKey, Map<String, AttributeValue>> records) {
    List<PreconditionViolation> shortLines = new ArrayList<>();
    List<TransactWriteItem> items = new ArrayList<>();
    items.add(TransactWriteItem.builder().put(p -> p
        .tableName(store.table())
        .item(ReservationItems.held(wanted))
        .conditionExpression("attribute_not_exists(#pk)")
        .expressionAttributeNames(Map.of("#pk", PK))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build());
    for (ReservationLine line : wanted.lines()) {
      StockChanges.Read read = stockOf(line, records);
      long available = read.stock().available();
      if (available < line.quantity()) {
        shortLines.add(new PreconditionViolation("OUT_OF_STOCK",
            "products/" + line.productId() + "/warehouses/" + line.warehouseId(),
            "requested " + line.quantity() + ", available " + available));
        continue;
      }
      items.addAll(changes.change(read, 0, line.quantity(), wanted.updateTime()));
    }
    if (!shortLines.isEmpty()) {
      throw new FailedPreconditionException("OUT_OF_STOCK",
          "order " + wanted.orderId() + " asks for more than is available on " + shortLines.size() + " of its "
              + wanted.lines().size() + " lines: nothing was held",
          Map.of("order_id", wanted.orderId(), "short_lines", Integer.toString(shortLines.size())), shortLines);
    }
    return items;
  }

  // ---------------------------------------------------------------------------------------------- W7

  /** W7: HELD to CONFIRMED in one conditional update, which also takes the hold off A9's index. */
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
        .exceptionallyCompose(failure -> {
          Throwable cause = Failures.cause(failure);
          if (!(cause instanceof ConditionFailedException failed)) {
            return CompletableFuture.failedFuture(cause);
          }
          Map<String, AttributeValue> old = failed.item(RESERVATION);
          if (old.isEmpty()) {
            throw Reservation.notFound(orderId);
          }
          Reservation existing = ReservationItems.toReservation(old);
          return CompletableFuture.completedFuture(existing.confirmed()); // CONFIRMED or COMMITTED: as it is
        });
  }

  // ---------------------------------------------------------------------------------------------- W8

  /** W8: a CONFIRMED reservation's units leave: quantity and reserved drop on every line, with the reservation. */
  public CompletableFuture<Reservation> commit(String orderId, Instant now) {
    return commitRound(orderId, now, 1);
  }

  private CompletableFuture<Reservation> commitRound(String orderId, Instant now, int round) {
    Route route = InventoryKeys.COMMIT_RESERVATION;
    return store.get(route, InventoryKeys.reservation(orderId), true, ReservationItems::toReservation)
        .thenCompose(found -> {
          Reservation current = found.orElseThrow(() -> Reservation.notFound(orderId));
          if (!current.toCommit()) {
            return CompletableFuture.completedFuture(current);
          }
          Reservation next = ended(current, State.COMMITTED, Optional.empty(), now);
          return endHold(route, "CommitReservation", current, next, true, now)
              .thenApply(ok -> next)
              .exceptionallyCompose(failure -> {
                requireAnotherRound(Failures.cause(failure), round);
                return commitRound(orderId, now, round + 1);
              });
        });
  }

  // ---------------------------------------------------------------------------------------------- W9

  /**
   * W9: gives a HELD or CONFIRMED reservation's units back, or leaves a tombstone for an order that has
   * none. With {@code cause} HOLD_EXPIRED (the expiry loop) it releases only a HELD reservation whose
   * hold expired by {@code now}, and answers anything else as it is (empty when there is none): a
   * confirm that won the race is never undone.
   */
  public CompletableFuture<Optional<Reservation>> release(String orderId, ReleaseCause cause, Instant now) {
    return releaseRound(orderId, cause, now, 1);
  }

  private CompletableFuture<Optional<Reservation>> releaseRound(String orderId, ReleaseCause cause, Instant now, int round) {
    Route route = InventoryKeys.RELEASE_RESERVATION;
    boolean expiry = cause == ReleaseCause.HOLD_EXPIRED;
    return store.get(route, InventoryKeys.reservation(orderId), true, ReservationItems::toReservation)
        .thenCompose(found -> {
          if (found.isEmpty()) {
            return expiry ? CompletableFuture.completedFuture(Optional.<Reservation>empty())
                : tombstone(orderId, now, round);
          }
          Reservation current = found.get();
          if (current.state() == State.RELEASED) {
            return CompletableFuture.completedFuture(found);
          }
          if (expiry && (current.state() != State.HELD || current.holdExpireTime().isAfter(now))) {
            return CompletableFuture.completedFuture(found);
          }
          current.requireReleasable();
          Reservation next = ended(current, State.RELEASED, Optional.of(cause), now);
          return endHold(route, expiry ? "ExpireHold" : "ReleaseReservation", current, next, false, now)
              .thenApply(ok -> Optional.of(next))
              .exceptionallyCompose(failure -> {
                // Its state or stock changed meanwhile (a confirm, another release): see it again.
                requireAnotherRound(Failures.cause(failure), round);
                return releaseRound(orderId, cause, now, round + 1);
              });
        });
  }

  /**
   * The one transaction that ends what {@code current} holds: its state moved to {@code next}'s, and each
   * line's units taken off reserved; with {@code shipped}, off the quantity on hand too (a commit), else
   * available again (a release). Reads the lines' stock first, strongly, for their conditions.
   */
  private CompletableFuture<Void> endHold(Route route, String operation, Reservation current, Reservation next,
      boolean shipped, Instant now) {
    return store.batchGet(route, stockKeys(current), true)
        .thenCompose(records -> {
          List<TransactWriteItem> items = new ArrayList<>();
          items.add(stateChange(current, next));
          for (ReservationLine line : current.lines()) {
            StockChanges.Read read = stockOf(line, records);
            requireReserved(read, line);
            items.addAll(changes.change(read, shipped ? -line.quantity() : 0, -line.quantity(), now));
          }
          return store.transact(operation, route, items, failed -> false);
        });
  }

  /** A release before any reserve: a RELEASED reservation with no lines, so that a late ReserveStock fails. */
  private CompletableFuture<Optional<Reservation>> tombstone(String orderId, Instant now, int round) {
    Reservation tombstone = new Reservation(orderId, State.RELEASED, List.of(), now, Optional.of(ReleaseCause.BEFORE_RESERVE),
        now, now);
    TransactWriteItem put = TransactWriteItem.builder().put(p -> p
        .tableName(store.table())
        .item(ReservationItems.tombstone(tombstone))
        .conditionExpression("attribute_not_exists(#pk)")
        .expressionAttributeNames(Map.of("#pk", PK)))
        .build();
    return store.transact("ReleaseReservation", InventoryKeys.RELEASE_RESERVATION, List.of(put), failed -> false)
        .thenApply(ok -> Optional.of(tombstone))
        .exceptionallyCompose(failure -> {
          // A reserve won the race: release what it holds.
          requireAnotherRound(Failures.cause(failure), round);
          return releaseRound(orderId, ReleaseCause.REQUESTED, now, round + 1);
        });
  }

  // ---------------------------------------------------------------------------------------------- A9

  /** A9: HELD reservations whose hold expired by {@code now}, oldest first, from every shard of GSI1 at once. */
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

  /** The reservation as it ends (COMMITTED or RELEASED): no longer listed as a hold, kept for its TTL. */
  private static Reservation ended(Reservation current, State state, Optional<ReleaseCause> cause, Instant now) {
    return new Reservation(current.orderId(), state, current.lines(), current.holdExpireTime(), cause,
        current.createTime(), now);
  }

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
        .expressionAttributeValues(values))
        .build();
  }

  private static List<TableKey> stockKeys(Reservation r) {
    return r.lines().stream().map(l -> InventoryKeys.stock(l.productId(), l.warehouseId())).toList();
  }

  private static StockChanges.Read stockOf(ReservationLine line, Map<TableKey, Map<String, AttributeValue>> records) {
    Map<String, AttributeValue> item = records.get(InventoryKeys.stock(line.productId(), line.warehouseId()));
    if (item == null) {
      throw InventoryService.inventoryNotFound(line.productId(), line.warehouseId());
    }
    return StockChanges.Read.of(item);
  }

  /**
   * A held line's units are reserved on its stock. When they are not, the reservation and its stock were
   * read at different moments (a racing release gave them back in between): read both again.
   */
  private static void requireReserved(StockChanges.Read read, ReservationLine line) {
    if (read.stock().reserved() < line.quantity()) {
      throw new ReadApart();
    }
  }

  /** The reservation and its stock were read on either side of another call's transaction. */
  private static final class ReadApart extends RuntimeException {
    ReadApart() {
      super("the reservation and its stock were read apart", null, false, false);
    }
  }

  /**
   * Returns when a round failed because its records changed meanwhile (a condition) or a conflicting
   * transaction outlasted the data layer's retries, and another round may run; throws otherwise.
   * Every round re-reads, so repeating one never applies a change twice.
   */
  private static void requireAnotherRound(Throwable cause, int round) {
    boolean changed = cause instanceof ConditionFailedException || cause instanceof ReadApart
        || cause instanceof AbortedException aborted && aborted.reason().equals("TRANSACTION_CONFLICT");
    if (!changed) {
      throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
    }
    if (round >= ROUNDS) {
      throw new AbortedException("CONCURRENT_UPDATE", "the reservation or its stock kept changing concurrently; retry",
          Map.of());
    }
  }
}
