package dev.warehouse.inventory.store;

import static dev.warehouse.inventory.store.InventoryItems.CREATE_TIME;
import static dev.warehouse.inventory.store.InventoryItems.DELTA;
import static dev.warehouse.inventory.store.InventoryItems.ENTITY;
import static dev.warehouse.inventory.store.InventoryItems.QUANTITY;
import static dev.warehouse.inventory.store.InventoryItems.UPDATE_TIME;
import static dev.warehouse.inventory.store.InventoryItems.WAREHOUSE_ID;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_PK;
import static dev.warehouse.runtime.dynamo.SingleTable.GSI1_SK;
import static dev.warehouse.runtime.dynamo.SingleTable.PK;
import static dev.warehouse.runtime.dynamo.SingleTable.SK;

import dev.warehouse.inventory.domain.InventoryRepository;
import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.SerialItem;
import dev.warehouse.inventory.domain.StockAdjustment;
import dev.warehouse.runtime.dynamo.ConditionFailedException;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.routing.Route;
import java.time.Duration;
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

/** {@link InventoryRepository} on the single DynamoDB table, through the shared {@link DynamoStore}. */
public final class DynamoInventoryRepository implements InventoryRepository {

  /** How long an AdjustStock request id is remembered; a retry later than this applies again. */
  public static final Duration REQUEST_RECORD_TTL = Duration.ofDays(7);

  /** Position of the request record in the W3 transaction, after the first stock item, for its cancellation reason. */
  private static final int REQUEST = 1;
  /** Read-modify-write rounds of a stock change whose record keeps changing, before ABORTED. */
  static final int ROUNDS = 8;

  private final DynamoStore store;
  private final LowStockShards lowStock;
  private final StockChanges changes;

  private final StockBuckets buckets;

  /** With buckets of its own: for tests and tools that run one repository. */
  public DynamoInventoryRepository(DynamoStore store, LowStockShards lowStock) {
    this(store, lowStock, StockBuckets.standalone(store, lowStock));
  }

  public DynamoInventoryRepository(DynamoStore store, LowStockShards lowStock, StockBuckets buckets) {
    this.store = store;
    this.lowStock = lowStock;
    this.changes = new StockChanges(store.table(), lowStock);
    this.buckets = buckets;
  }

  @Override
  public CompletableFuture<Optional<SerialItem>> findSerialItem(String serialNumber, boolean consistentRead) {
    return store.get(InventoryKeys.SERIAL_ITEM, InventoryKeys.serialItem(serialNumber), consistentRead,
        InventoryItems::toSerialItem);
  }

  @Override
  public CompletableFuture<Optional<ProductInventory>> findInventory(String productId, String warehouseId, boolean consistentRead) {
    Route route = InventoryKeys.PRODUCT_AT_WAREHOUSE;
    return store.get(route, InventoryKeys.stock(productId, warehouseId), consistentRead, item -> item)
        .thenCompose(record -> buckets.whole(route, productId, warehouseId, record))
        .thenApply(whole -> whole.map(SplitStock::sum));
  }

  /** A page of stock records with each split one's sum in its place (one snapshot of its buckets each). */
  private CompletableFuture<Page<ProductInventory>> summed(Route route, Page<Map<String, AttributeValue>> page) {
    List<CompletableFuture<ProductInventory>> sums = page.items().stream()
        .map(item -> {
          ProductInventory record = InventoryItems.toProductInventory(item);
          return buckets.whole(route, record.productId(), record.warehouseId(), Optional.of(item))
              .thenApply(whole -> whole.map(SplitStock::sum).orElse(record));
        })
        .toList();
    return CompletableFuture.allOf(sums.toArray(CompletableFuture[]::new))
        .thenApply(done -> new Page<>(sums.stream().map(CompletableFuture::join).toList(), page.nextPageToken()));
  }

  @Override
  public CompletableFuture<Page<ProductInventory>> listByProduct(String productId, PageQuery page) {
    String pk = InventoryKeys.productPk(productId);
    QueryRequest query = QueryRequest.builder()
        .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
        .expressionAttributeNames(Map.of("#pk", PK, "#sk", SK))
        .expressionAttributeValues(Map.of(
            ":pk", AttributeValue.fromS(pk), ":prefix", AttributeValue.fromS(InventoryKeys.warehousesPrefix())))
        .consistentRead(page.consistentRead())
        .build();
    return store.query(InventoryKeys.WAREHOUSES_OF_PRODUCT, query, page.pageSize(), page.pageToken(),
        InventoryKeys.WAREHOUSES_OF_PRODUCT.patternId() + "|" + pk, List.of(PK, SK), Map.entry(PK, pk),
        item -> item).thenCompose(found -> summed(InventoryKeys.WAREHOUSES_OF_PRODUCT, found));
  }

  @Override
  public CompletableFuture<Page<ProductInventory>> listByWarehouse(String warehouseId, PageQuery page) {
    String pk = InventoryKeys.warehouseGsiPk(warehouseId);
    QueryRequest query = QueryRequest.builder()
        .indexName(GSI1)
        .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
        .expressionAttributeNames(Map.of("#pk", GSI1_PK, "#sk", GSI1_SK))
        .expressionAttributeValues(Map.of(
            ":pk", AttributeValue.fromS(pk), ":prefix", AttributeValue.fromS(InventoryKeys.productsPrefix())))
        .build();
    return store.query(InventoryKeys.PRODUCTS_IN_WAREHOUSE, query, page.pageSize(), page.pageToken(),
        InventoryKeys.PRODUCTS_IN_WAREHOUSE.patternId() + "|" + pk, List.of(GSI1_PK, GSI1_SK, PK, SK),
        Map.entry(GSI1_PK, pk), item -> item).thenCompose(found -> summed(InventoryKeys.PRODUCTS_IN_WAREHOUSE, found));
  }

  @Override
  public CompletableFuture<Page<ProductInventory>> listLowStock(PageQuery page) {
    List<QueryRequest> shards = IntStream.range(0, lowStock.count())
        .mapToObj(shard -> QueryRequest.builder()
            .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
            .expressionAttributeNames(Map.of("#pk", PK, "#sk", SK))
            .expressionAttributeValues(Map.of(
                ":pk", AttributeValue.fromS(InventoryKeys.lowStockPk(shard)),
                ":prefix", AttributeValue.fromS(InventoryKeys.lowStockPrefix())))
            .consistentRead(page.consistentRead())
            .build())
        .toList();
    // The scope names the shard count: a token of another count is refused, not misread.
    String scope = InventoryKeys.LOW_STOCK.patternId() + "|shards=" + shards.size();
    return store.queryShards(InventoryKeys.LOW_STOCK, shards, page.pageSize(), page.pageToken(), scope,
        InventoryItems::toProductInventory);
  }

  @Override
  public CompletableFuture<SerialItem> putSerialItem(SerialItem item) {
    return store.put(InventoryKeys.PUT_SERIAL_ITEM, InventoryItems.toItem(item)).thenApply(ok -> item);
  }

  @Override
  public CompletableFuture<ProductInventory> putInventory(ProductInventory inventory) {
    return putRound(inventory, 1);
  }

  /**
   * One read-modify-write round of W2: the record as it is (strongly), then one transaction that
   * replaces it, conditioned on what was read, and moves its marker. The units reserved for orders are
   * kept (the quantity sets what is on hand), so it may not go below them. A concurrent change in
   * between fails the condition, and the next round starts from the new state.
   */
  private CompletableFuture<ProductInventory> putRound(ProductInventory asked, int round) {
    Route route = InventoryKeys.PUT_INVENTORY;
    return store.get(route, InventoryKeys.stock(asked.productId(), asked.warehouseId()), true, item -> item)
        .thenCompose(record -> buckets.whole(route, asked.productId(), asked.warehouseId(), record))
        .thenCompose(current -> {
          ProductInventory next = asked.replacing(current.map(SplitStock::sum));
          List<TransactWriteItem> items = new ArrayList<>();
          if (current.isEmpty() || !current.get().split()) {
            items.add(replacing(InventoryItems.toItem(next), current.map(SplitStock::record)));
          } else {
            // Each bucket keeps its reserved units; the available ones are shared evenly over the N.
            SplitStock whole = current.get();
            long available = next.available();
            int n = whole.active();
            for (int b = 0; b < whole.kept(); b++) {
              Optional<StockChanges.Read> bucket = whole.bucket(b);
              if (bucket.isEmpty()) {
                continue;
              }
              long reserved = bucket.get().stock().reserved();
              long share = b < n ? available / n + (b < available % n ? 1 : 0) : 0;
              ProductInventory part = new ProductInventory(next.productId(), next.warehouseId(), reserved + share,
                  next.reorderPoint(), next.updateTime(), reserved, n);
              items.add(replacing(b == 0 ? InventoryItems.toItem(part, whole.kept()) : InventoryItems.bucketItem(part, b),
                  bucket));
            }
          }
          items.addAll(changes.markerMoves(current.map(SplitStock::sum), next));
          return store.transact("PutProductInventory", route, items, failed -> false)
              .thenApply(ok -> next)
              .exceptionallyCompose(failure -> {
                requireConcurrentChange(Failures.cause(failure), round, next);
                return putRound(asked, round + 1);
              });
        });
  }

  /**
   * A Put of {@code item} over the bucket as {@code current} was read (or where there is none), its write
   * counted on from the one read.
   */
  private TransactWriteItem replacing(Map<String, AttributeValue> item, Optional<StockChanges.Read> current) {
    Map<String, AttributeValue> values = new HashMap<>();
    String condition = current.isPresent() ? StockChanges.asRead(current.get(), values) : "attribute_not_exists(#pk)";
    Map<String, String> names = current.isPresent()
        ? current.get().storesAvailable()
            ? Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#rs", InventoryItems.RESERVED, "#ver", InventoryItems.VERSION)
            : Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#av", InventoryItems.AVAILABLE, "#ver", InventoryItems.VERSION)
        : Map.of("#pk", PK);
    Map<String, AttributeValue> counted = new HashMap<>(item);
    counted.put(InventoryItems.VERSION, AttributeValue.fromN(Long.toString(current.map(StockChanges.Read::version).orElse(0L) + 1)));
    return TransactWriteItem.builder().put(p -> p
        .tableName(store.table())
        .item(counted)
        .conditionExpression(condition)
        .expressionAttributeNames(names)
        .expressionAttributeValues(values.isEmpty() ? null : values))
        .build();
  }

  @Override
  public CompletableFuture<ProductInventory> setBucketCount(String productId, String warehouseId, int count, Instant now) {
    return setBucketsRound(productId, warehouseId, count, now, 1).whenComplete((ok, failure) -> {
      if (failure == null) {
        buckets.rebalanceSoon(productId, warehouseId); // units move into new buckets, out of retired ones
      }
    });
  }

  /**
   * One round of W10: the record, the snapshot of every bucket, then one transaction that sets the
   * counts on the record (conditioned on those read), creates the buckets that do not exist yet and
   * shares the available units evenly over the new count, so that a split spreads holds from its first
   * hold on (each bucket added to where it stays clear of the reorder point, else set as read; the sum
   * does not change). Lowering the count keeps the buckets above it (K): holds stop taking from them, their
   * available units move down now, and the rebalance deletes each once its reserved ones have ended.
   */
  private CompletableFuture<ProductInventory> setBucketsRound(String productId, String warehouseId, int count, Instant now,
      int round) {
    Route route = InventoryKeys.SET_STOCK_BUCKETS;
    return store.get(route, InventoryKeys.stock(productId, warehouseId), true, item -> item)
        .thenCompose(record -> buckets.snapshot(route, productId, warehouseId,
            InventoryItems.bucketsKept(record.orElseThrow(() -> InventoryService.inventoryNotFound(productId, warehouseId)))))
        .thenCompose(found -> {
          SplitStock whole = found.orElseThrow(() -> InventoryService.inventoryNotFound(productId, warehouseId));
          if (whole.active() == count) {
            return CompletableFuture.completedFuture(whole.sum());
          }
          int kept = Math.max(whole.kept(), count);
          ProductInventory record = whole.record().stock();
          Map<String, String> names = new HashMap<>(Map.of("#bc", InventoryItems.BUCKET_COUNT, "#bk", InventoryItems.BUCKETS_KEPT));
          Map<String, AttributeValue> values = new HashMap<>(Map.of(
              ":count", AttributeValue.fromN(Integer.toString(count)), ":kept", AttributeValue.fromN(Integer.toString(kept))));
          String condition;
          if (whole.split()) {
            condition = "#bc = :count_read AND #bk = :kept_read";
            values.put(":count_read", AttributeValue.fromN(Integer.toString(whole.active())));
            values.put(":kept_read", AttributeValue.fromN(Integer.toString(whole.kept())));
          } else {
            condition = "attribute_not_exists(#bc) AND attribute_not_exists(#bk)";
          }
          long available = StockBuckets.available(whole);
          List<Integer> takers = StockBuckets.takers(whole, count, true);
          List<TransactWriteItem> items = new ArrayList<>(changes.move(whole, StockBuckets.moves(whole, takers), now));
          // The record's counts go into its own move, if it has one: one action per item in a transaction.
          TableKey recordKey = InventoryKeys.stock(productId, warehouseId);
          int at = -1;
          for (int i = 0; i < items.size(); i++) {
            at = TableKey.of(items.get(i).update().key()).equals(recordKey) ? i : at;
          }
          if (at < 0) {
            StockChanges.countWrite(names, values);
            items.add(0, TransactWriteItem.builder().update(u -> u.tableName(store.table()).key(recordKey.attributes())
                .updateExpression("SET #bc = :count, #bk = :kept, " + StockChanges.COUNT_WRITE).conditionExpression(condition)
                .expressionAttributeNames(names).expressionAttributeValues(values)).build());
          } else {
            software.amazon.awssdk.services.dynamodb.model.Update move = items.get(at).update();
            Map<String, String> allNames = new HashMap<>(move.expressionAttributeNames());
            allNames.putAll(names);
            Map<String, AttributeValue> allValues = new HashMap<>(move.expressionAttributeValues());
            allValues.putAll(values);
            items.set(at, TransactWriteItem.builder().update(move.toBuilder()
                .updateExpression(move.updateExpression() + ", #bc = :count, #bk = :kept")
                .conditionExpression("(" + move.conditionExpression() + ") AND " + condition)
                .expressionAttributeNames(allNames).expressionAttributeValues(allValues).build()).build());
          }
          for (int b = whole.kept(); b < count; b++) {
            long share = StockBuckets.share(available, takers, b);
            ProductInventory part = new ProductInventory(productId, warehouseId, share, record.reorderPoint(), now, 0);
            Map<String, AttributeValue> bucket = InventoryItems.bucketItem(part, b);
            items.add(TransactWriteItem.builder().put(p -> p.tableName(store.table()).item(bucket)
                .conditionExpression("attribute_not_exists(#pk)").expressionAttributeNames(Map.of("#pk", PK))).build());
          }
          return store.transact("SetStockBuckets", route, items, failed -> false)
              .thenApply(ok -> whole.sum().withBucketCount(count))
              .exceptionallyCompose(failure -> {
                Throwable cause = Failures.cause(failure);
                // Conflicts that outlasted the data layer's attempts wrote nothing either: read and try again.
                boolean conflicted = cause instanceof AbortedException aborted && aborted.reason().equals("TRANSACTION_CONFLICT");
                if (!conflicted || round >= ROUNDS) {
                  requireConcurrentChange(cause, round, whole.sum());
                }
                return setBucketsRound(productId, warehouseId, count, now, round + 1);
              });
        });
  }

  @Override
  public CompletableFuture<ProductInventory> adjustStock(StockAdjustment adj, Instant now) {
    Route route = InventoryKeys.ADJUST_STOCK;
    return applyRound(adj, now, 1)
        // Applied now or by an earlier call with this request id: either way, answer with the stock.
        .thenCompose(applied -> store.get(route, InventoryKeys.stock(adj.productId(), adj.warehouseId()), true, item -> item))
        .thenCompose(record -> buckets.whole(route, adj.productId(), adj.warehouseId(), record))
        .thenApply(found -> found.map(SplitStock::sum)
            .orElseThrow(() -> InventoryService.inventoryNotFound(adj.productId(), adj.warehouseId())));
  }

  /**
   * One round of W3: the stock and this request id's record, read strongly and at once; then one
   * transaction of the stock's update, the request record and the marker's move ({@link StockChanges}:
   * away from the reorder point the update adds {@code delta} to whatever the stock then is, so
   * concurrent picks of one item do not conflict; near it, it sets the values read and changed). A
   * condition that no longer holds starts the next round from the new state. Completes when the change
   * is applied, now or by an earlier call with this request id.
   */
  private CompletableFuture<Void> applyRound(StockAdjustment adj, Instant now, int round) {
    Route route = InventoryKeys.ADJUST_STOCK;
    CompletableFuture<Optional<Map<String, AttributeValue>>> stock =
        store.get(route, InventoryKeys.stock(adj.productId(), adj.warehouseId()), true, item -> item);
    CompletableFuture<Optional<Map<String, AttributeValue>>> earlier = store.get(route,
        InventoryKeys.stockRequest(adj.productId(), adj.requestId()), true, item -> item);
    return stock.thenCombine(earlier, (current, record) -> {
          if (record.isPresent()) {
            requireSameChange(adj, record.get());
            return Optional.<Optional<Map<String, AttributeValue>>>empty(); // applied before
          }
          return Optional.of(current);
        })
        .thenCompose(current -> current.isEmpty()
            ? CompletableFuture.completedFuture(Optional.<List<TransactWriteItem>>empty())
            : buckets.whole(route, adj.productId(), adj.warehouseId(), current.get()).thenApply(whole -> Optional.of(
                adjustment(adj, whole.orElseThrow(() -> InventoryService.inventoryNotFound(adj.productId(), adj.warehouseId())),
                    now))))
        .thenCompose(items -> items.isEmpty()
            ? CompletableFuture.completedFuture(null)
            : store.transact("AdjustStock", InventoryKeys.ADJUST_STOCK, items.get(), failed -> isReplay(adj, failed))
                .exceptionallyCompose(failure -> {
                  Throwable cause = Failures.cause(failure);
                  if (cause instanceof ConditionFailedException failed && failed.failed(REQUEST)) {
                    requireSameChange(adj, failed.item(REQUEST)); // a duplicate committed meanwhile
                    return CompletableFuture.completedFuture(null);
                  }
                  requireConcurrentChange(cause, round, null);
                  return applyRound(adj, now, round + 1);
                }));
  }

  /** The transaction that applies {@code adj} to {@code read}: stock update, request record, marker moves. */
  private List<TransactWriteItem> adjustment(StockAdjustment adj, SplitStock whole, Instant now) {
    adj.quantityAfter(whole.sum()); // refuses the change before any write
    SortedMap<Integer, StockChanges.Delta> deltas = new TreeMap<>();
    if (adj.delta() > 0) {
      // A receipt is shared evenly over the buckets holds take from.
      List<Integer> active = java.util.stream.IntStream.range(0, whole.active()).filter(b -> whole.bucket(b).isPresent())
          .boxed().toList();
      for (int i = 0; i < active.size(); i++) {
        long share = adj.delta() / active.size() + (i < adj.delta() % active.size() ? 1 : 0);
        if (share > 0) {
          deltas.put(active.get(i), new StockChanges.Delta(share, 0));
        }
      }
    } else {
      // A pick takes available units from the buckets that have most.
      StockBuckets.takes(whole, -adj.delta()).forEach(t -> deltas.put(t.bucket(), new StockChanges.Delta(-t.quantity(), 0)));
    }
    List<TransactWriteItem> items = new ArrayList<>(changes.change(whole, deltas, now));
    items.add(REQUEST, TransactWriteItem.builder().put(p -> p
        .tableName(store.table())
        .item(requestRecord(adj, now))
        .conditionExpression("attribute_not_exists(#pk)")
        .expressionAttributeNames(Map.of("#pk", PK))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build());
    return items;
  }

  /** Returns when a round failed because the record changed meanwhile and another round may run; throws otherwise. */
  private static void requireConcurrentChange(Throwable cause, int round, ProductInventory next) {
    // A condition on the stock (any bucket of it): the request record's was handled before.
    if (!(cause instanceof ConditionFailedException)) {
      throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
    }
    if (round >= ROUNDS) {
      throw new AbortedException("CONCURRENT_UPDATE", "the stock kept changing concurrently; retry"
          + (next == null ? " with the same request_id" : ""), Map.of());
    }
  }

  private static Map<String, AttributeValue> requestRecord(StockAdjustment adj, Instant now) {
    Map<String, AttributeValue> item = new HashMap<>(InventoryKeys.stockRequest(adj.productId(), adj.requestId()).attributes());
    item.put(ENTITY, AttributeValue.fromS("StockRequest"));
    item.put(WAREHOUSE_ID, AttributeValue.fromS(adj.warehouseId()));
    item.put(DELTA, AttributeValue.fromN(Long.toString(adj.delta())));
    item.put(CREATE_TIME, AttributeValue.fromS(now.toString()));
    item.put(SingleTable.EXPIRE_AT, AttributeValue.fromN(Long.toString(now.plus(REQUEST_RECORD_TTL).getEpochSecond())));
    return item;
  }

  /** Whether the request record exists for the same change: this request id was applied before. */
  private static boolean isReplay(StockAdjustment adj, ConditionFailedException failed) {
    return sameChange(adj, failed.item(REQUEST));
  }

  /** Whether {@code record} (a request record, or empty) is of the same change as {@code adj}. */
  private static boolean sameChange(StockAdjustment adj, Map<String, AttributeValue> record) {
    return !record.isEmpty()
        && adj.warehouseId().equals(record.get(WAREHOUSE_ID).s())
        && Long.toString(adj.delta()).equals(record.get(DELTA).n());
  }

  /** Returns when {@code record} is this request id's record of the same change; else REQUEST_ID_REUSED. */
  private static void requireSameChange(StockAdjustment adj, Map<String, AttributeValue> record) {
    if (!sameChange(adj, record)) {
      throw adj.requestIdReused();
    }
  }
}
