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
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.paging.Page;
import java.time.Duration;
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

/** {@link InventoryRepository} on the single DynamoDB table, through the shared {@link DynamoStore}. */
public final class DynamoInventoryRepository implements InventoryRepository {

  /** How long an AdjustStock request id is remembered; a retry later than this applies again. */
  public static final Duration REQUEST_RECORD_TTL = Duration.ofDays(7);

  /** Positions of the items in the W2 and W3 transactions, for reading their cancellation reasons. */
  private static final int STOCK = 0;
  private static final int REQUEST = 1;
  /** Read-modify-write rounds of a stock change whose record keeps changing, before ABORTED. */
  static final int ROUNDS = 8;

  private final DynamoStore store;
  private final LowStockShards lowStock;
  private final StockChanges changes;

  public DynamoInventoryRepository(DynamoStore store, LowStockShards lowStock) {
    this.store = store;
    this.lowStock = lowStock;
    this.changes = new StockChanges(store.table(), lowStock);
  }

  @Override
  public CompletableFuture<Optional<SerialItem>> findSerialItem(String serialNumber, boolean consistentRead) {
    return store.get(InventoryKeys.SERIAL_ITEM, InventoryKeys.serialItem(serialNumber), consistentRead,
        InventoryItems::toSerialItem);
  }

  @Override
  public CompletableFuture<Optional<ProductInventory>> findInventory(String productId, String warehouseId, boolean consistentRead) {
    return store.get(InventoryKeys.PRODUCT_AT_WAREHOUSE, InventoryKeys.stock(productId, warehouseId), consistentRead,
        InventoryItems::toProductInventory);
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
        InventoryItems::toProductInventory);
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
        Map.entry(GSI1_PK, pk), InventoryItems::toProductInventory);
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
    return currentStock(InventoryKeys.PUT_INVENTORY, asked.productId(), asked.warehouseId())
        .thenCompose(current -> {
          ProductInventory next = asked.replacing(current.map(StockChanges.Read::stock));
          // Replaces the record only as it was read (or creates it, if there was none).
          Map<String, AttributeValue> values = new HashMap<>();
          String condition = current.isPresent() ? StockChanges.asRead(current.get(), values) : "attribute_not_exists(#pk)";
          Map<String, String> names = current.isPresent()
              ? current.get().storesAvailable()
                  ? Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#rs", InventoryItems.RESERVED)
                  : Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#av", InventoryItems.AVAILABLE)
              : Map.of("#pk", PK);
          List<TransactWriteItem> items = new ArrayList<>();
          items.add(TransactWriteItem.builder().put(p -> p
              .tableName(store.table())
              .item(InventoryItems.toItem(next))
              .conditionExpression(condition)
              .expressionAttributeNames(names)
              .expressionAttributeValues(values.isEmpty() ? null : values))
              .build());
          items.addAll(changes.markerMoves(current.map(StockChanges.Read::stock), next));
          return store.transact("PutProductInventory", InventoryKeys.PUT_INVENTORY, items, failed -> false)
              .thenApply(ok -> next)
              .exceptionallyCompose(failure -> {
                requireConcurrentChange(Failures.cause(failure), round, next);
                return putRound(asked, round + 1);
              });
        });
  }

  @Override
  public CompletableFuture<ProductInventory> adjustStock(StockAdjustment adj, Instant now) {
    return applyRound(adj, now, 1)
        // Applied now or by an earlier call with this request id: either way, answer with the stock.
        .thenCompose(applied -> currentStock(InventoryKeys.ADJUST_STOCK, adj.productId(), adj.warehouseId()))
        .thenApply(found -> found.map(StockChanges.Read::stock)
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
    CompletableFuture<Optional<StockChanges.Read>> stock =
        currentStock(InventoryKeys.ADJUST_STOCK, adj.productId(), adj.warehouseId());
    CompletableFuture<Optional<Map<String, AttributeValue>>> earlier = store.get(InventoryKeys.ADJUST_STOCK,
        InventoryKeys.stockRequest(adj.productId(), adj.requestId()), true, item -> item);
    return stock.thenCombine(earlier, (current, record) -> {
          if (record.isPresent()) {
            requireSameChange(adj, record.get());
            return Optional.<List<TransactWriteItem>>empty(); // applied before
          }
          StockChanges.Read found = current.orElseThrow(
              () -> InventoryService.inventoryNotFound(adj.productId(), adj.warehouseId()));
          return Optional.of(adjustment(adj, found, now));
        })
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
  private List<TransactWriteItem> adjustment(StockAdjustment adj, StockChanges.Read read, Instant now) {
    adj.quantityAfter(read.stock()); // refuses the change before any write
    List<TransactWriteItem> items = new ArrayList<>(changes.change(read, adj.delta(), 0, now));
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
    if (!(cause instanceof ConditionFailedException failed) || !failed.failed(STOCK)) {
      throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
    }
    if (round >= ROUNDS) {
      throw new AbortedException("CONCURRENT_UPDATE", "the stock kept changing concurrently; retry"
          + (next == null ? " with the same request_id" : ""), Map.of());
    }
  }

  private CompletableFuture<Optional<StockChanges.Read>> currentStock(dev.warehouse.runtime.routing.Route route,
      String productId, String warehouseId) {
    return store.get(route, InventoryKeys.stock(productId, warehouseId), true, StockChanges.Read::of);
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
