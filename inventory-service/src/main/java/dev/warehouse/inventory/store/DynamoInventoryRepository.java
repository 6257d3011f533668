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
import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.paging.Page;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/** {@link InventoryRepository} on the single DynamoDB table, through the shared {@link DynamoStore}. */
public final class DynamoInventoryRepository implements InventoryRepository {

  /** How long an AdjustStock request id is remembered; a retry later than this applies again. */
  public static final Duration REQUEST_RECORD_TTL = Duration.ofDays(7);

  /** Positions of the items in the AdjustStock transaction, for reading its cancellation reasons. */
  private static final int STOCK = 0;
  private static final int REQUEST = 1;

  private final DynamoStore store;

  public DynamoInventoryRepository(DynamoStore store) {
    this.store = store;
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
  public CompletableFuture<SerialItem> putSerialItem(SerialItem item) {
    return store.put(InventoryKeys.PUT_SERIAL_ITEM, InventoryItems.toItem(item)).thenApply(ok -> item);
  }

  @Override
  public CompletableFuture<ProductInventory> putInventory(ProductInventory inventory) {
    return store.put(InventoryKeys.PUT_INVENTORY, InventoryItems.toItem(inventory)).thenApply(ok -> inventory);
  }

  @Override
  public CompletableFuture<ProductInventory> adjustStock(StockAdjustment adj, Instant now) {
    long needed = Math.max(0, -adj.delta());
    long ceiling = ProductInventory.MAX_QUANTITY - Math.max(0, adj.delta());
    TransactWriteItem update = TransactWriteItem.builder().update(u -> u
        .tableName(store.table())
        .key(InventoryKeys.stock(adj.productId(), adj.warehouseId()).attributes())
        .updateExpression("SET #q = #q + :delta, #ut = :now")
        .conditionExpression("attribute_exists(#pk) AND #q >= :needed AND #q <= :ceiling")
        .expressionAttributeNames(Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#pk", PK))
        .expressionAttributeValues(Map.of(
            ":delta", AttributeValue.fromN(Long.toString(adj.delta())),
            ":now", AttributeValue.fromS(now.toString()),
            ":needed", AttributeValue.fromN(Long.toString(needed)),
            ":ceiling", AttributeValue.fromN(Long.toString(ceiling))))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
    TransactWriteItem record = TransactWriteItem.builder().put(p -> p
        .tableName(store.table())
        .item(requestRecord(adj, now))
        .conditionExpression("attribute_not_exists(#pk)")
        .expressionAttributeNames(Map.of("#pk", PK))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
    return store.transact("AdjustStock", InventoryKeys.ADJUST_STOCK, List.of(update, record), failed -> isReplay(adj, failed))
        .exceptionally(failure -> {
          requireReplay(adj, failure);
          return null;
        })
        // Applied now or by an earlier call with this request id: either way, answer with the stock.
        .thenCompose(ok -> currentStock(adj));
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
    Map<String, AttributeValue> earlier = failed.item(REQUEST);
    return !earlier.isEmpty()
        && adj.warehouseId().equals(earlier.get(WAREHOUSE_ID).s())
        && Long.toString(adj.delta()).equals(earlier.get(DELTA).n());
  }

  /**
   * Returns normally when the failed transaction was a replay. Otherwise throws what the failure
   * means: a reused request id, a missing stock record, too little stock or too much, or (already
   * translated by the store) a conflict, throttling or an unavailable database.
   */
  private static void requireReplay(StockAdjustment adj, Throwable failure) {
    Throwable cause = Failures.cause(failure);
    if (!(cause instanceof ConditionFailedException failed)) {
      throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
    }
    if (failed.failed(REQUEST)) {
      if (isReplay(adj, failed)) {
        return;
      }
      throw new AlreadyExistsException("REQUEST_ID_REUSED",
          "request_id " + adj.requestId() + " was already used for a different stock change of product " + adj.productId(),
          Map.of("request_id", adj.requestId(), "product_id", adj.productId()));
    }
    Map<String, AttributeValue> current = failed.item(STOCK);
    if (current.isEmpty()) {
      throw InventoryService.inventoryNotFound(adj.productId(), adj.warehouseId());
    }
    String available = current.get(QUANTITY).n();
    if (adj.delta() > 0) {
      throw new FailedPreconditionException("STOCK_LIMIT_EXCEEDED",
          "cannot add " + adj.delta() + " units of product " + adj.productId() + " at warehouse " + adj.warehouseId()
              + ": it holds " + available + " and may hold at most " + ProductInventory.MAX_QUANTITY,
          Map.of("product_id", adj.productId(), "warehouse_id", adj.warehouseId(), "available", available,
              "requested", Long.toString(adj.delta()), "max_quantity", Long.toString(ProductInventory.MAX_QUANTITY)));
    }
    throw new FailedPreconditionException("INSUFFICIENT_STOCK",
        "cannot remove " + (-adj.delta()) + " units of product " + adj.productId() + " at warehouse "
            + adj.warehouseId() + ": only " + available + " in stock",
        Map.of("product_id", adj.productId(), "warehouse_id", adj.warehouseId(),
            "available", available, "requested", Long.toString(-adj.delta())));
  }

  private CompletableFuture<ProductInventory> currentStock(StockAdjustment adj) {
    return store.get(InventoryKeys.ADJUST_STOCK, InventoryKeys.stock(adj.productId(), adj.warehouseId()), true,
            InventoryItems::toProductInventory)
        .thenApply(found -> found.orElseThrow(() -> InventoryService.inventoryNotFound(adj.productId(), adj.warehouseId())));
  }
}
