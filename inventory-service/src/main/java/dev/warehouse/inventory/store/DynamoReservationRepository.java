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
import dev.warehouse.runtime.error.Failures;
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

  private final DynamoStore store;
  private final StockChanges changes;

  public DynamoReservationRepository(DynamoStore store, LowStockShards lowStock) {
    this.store = store;
    this.changes = new StockChanges(store.table(), lowStock);
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
    // Issued at once, in the route's order: a replay is answered from the reservation found, never from
    // stock that its own hold has since taken.
    CompletableFuture<Optional<Reservation>> existing = store.get(route, InventoryKeys.reservation(held.orderId()), true,
        ReservationItems::toReservation);
    CompletableFuture<Map<TableKey, Map<String, AttributeValue>>> stock = store.batchGet(route, stockKeys(held), true);
    return existing.thenCombine(stock, (found, records) -> {
          if (found.isPresent()) {
            throw new ReservationChangedException(held.orderId(), found);
          }
          return holdItems(held, records);
        })
        .thenCompose(items -> store.transact("ReserveStock", route, items,
                failed -> failed.failed(RESERVATION) && isReplay(held, failed.item(RESERVATION)))
            .thenApply(ok -> held)
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

  /** The W6 transaction: the reservation, then per line its stock's update and marker moves; or OUT_OF_STOCK. */
  private List<TransactWriteItem> holdItems(Reservation wanted, Map<TableKey, Map<String, AttributeValue>> records) {
    List<OutOfStockException.Shortage> shortLines = new ArrayList<>();
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
        shortLines.add(new OutOfStockException.Shortage(line.productId(), line.warehouseId(), line.quantity(), available));
        continue;
      }
      items.addAll(changes.change(read, 0, line.quantity(), wanted.updateTime()));
    }
    if (!shortLines.isEmpty()) {
      throw new OutOfStockException(wanted.orderId(), wanted.lines().size(), shortLines);
    }
    return items;
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
    return store.batchGet(route, stockKeys(current), true)
        .thenCompose(records -> {
          List<TransactWriteItem> items = new ArrayList<>();
          items.add(stateChange(current, next));
          for (ReservationLine line : current.lines()) {
            StockChanges.Read read = stockOf(line, records);
            if (read.stock().reserved() < line.quantity()) {
              // Read apart from the reservation: a racing call gave these units back after it was read.
              return reservationAsNow(route, current).thenCompose(now -> endRound(current, next, nextRound(round)));
            }
            items.addAll(changes.change(read, shipped ? -line.quantity() : 0, -line.quantity(), next.updateTime()));
          }
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
