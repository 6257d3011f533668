package dev.warehouse.inventory.store;

import dev.warehouse.runtime.error.Failures;
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
import dev.warehouse.runtime.dynamo.DynamoErrors;
import dev.warehouse.runtime.dynamo.PagedQuery;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.metrics.DynamoMetrics;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.routing.Route;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/** {@link InventoryRepository} on the single DynamoDB table, through the asynchronous client. */
public final class DynamoInventoryRepository implements InventoryRepository {

  /** How long an AdjustStock request id is remembered; a retry later than this applies again. */
  public static final Duration REQUEST_RECORD_TTL = Duration.ofDays(7);

  private static final String CONDITION_FAILED = "ConditionalCheckFailed";

  private final DynamoDbAsyncClient dynamo;
  private final String table;
  private final PagedQuery baseTablePages;
  private final PagedQuery gsi1Pages;

  public DynamoInventoryRepository(DynamoDbAsyncClient dynamo, String table, PageTokenCodec pageTokens) {
    this.dynamo = dynamo;
    this.table = table;
    this.baseTablePages = new PagedQuery(dynamo, pageTokens, List.of(PK, SK));
    this.gsi1Pages = new PagedQuery(dynamo, pageTokens, List.of(GSI1_PK, GSI1_SK, PK, SK));
  }

  @Override
  public CompletableFuture<Optional<SerialItem>> findSerialItem(String serialNumber, boolean consistentRead) {
    return get(InventoryKeys.SERIAL_ITEM, InventoryItems.serialKey(serialNumber), consistentRead, InventoryItems::toSerialItem);
  }

  @Override
  public CompletableFuture<Optional<ProductInventory>> findInventory(String productId, String warehouseId, boolean consistentRead) {
    return get(InventoryKeys.PRODUCT_AT_WAREHOUSE, InventoryItems.inventoryKey(productId, warehouseId), consistentRead,
        InventoryItems::toProductInventory);
  }

  @Override
  public CompletableFuture<Page<ProductInventory>> listByProduct(String productId, PageQuery page) {
    String pk = InventoryKeys.productPk(productId);
    QueryRequest query = QueryRequest.builder()
        .tableName(table)
        .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
        .expressionAttributeNames(Map.of("#pk", PK, "#sk", SK))
        .expressionAttributeValues(Map.of(
            ":pk", AttributeValue.fromS(pk), ":prefix", AttributeValue.fromS(InventoryKeys.warehousesPrefix())))
        .consistentRead(page.consistentRead())
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .overrideConfiguration(DynamoMetrics.pattern(InventoryKeys.WAREHOUSES_OF_PRODUCT.patternId()))
        .build();
    return baseTablePages.page(query, page.pageSize(), page.pageToken(),
        InventoryKeys.WAREHOUSES_OF_PRODUCT.patternId() + "|" + pk, Map.entry(PK, pk),
        InventoryItems::toProductInventory);
  }

  @Override
  public CompletableFuture<Page<ProductInventory>> listByWarehouse(String warehouseId, PageQuery page) {
    String pk = InventoryKeys.warehouseGsiPk(warehouseId);
    QueryRequest query = QueryRequest.builder()
        .tableName(table)
        .indexName(GSI1)
        .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
        .expressionAttributeNames(Map.of("#pk", GSI1_PK, "#sk", GSI1_SK))
        .expressionAttributeValues(Map.of(
            ":pk", AttributeValue.fromS(pk), ":prefix", AttributeValue.fromS(InventoryKeys.productsPrefix())))
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .overrideConfiguration(DynamoMetrics.pattern(InventoryKeys.PRODUCTS_IN_WAREHOUSE.patternId()))
        .build();
    return gsi1Pages.page(query, page.pageSize(), page.pageToken(),
        InventoryKeys.PRODUCTS_IN_WAREHOUSE.patternId() + "|" + pk, Map.entry(GSI1_PK, pk),
        InventoryItems::toProductInventory);
  }

  @Override
  public CompletableFuture<SerialItem> putSerialItem(SerialItem item) {
    return dynamo.putItem(b -> b.tableName(table).item(InventoryItems.toItem(item))
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
            .overrideConfiguration(DynamoMetrics.pattern(InventoryKeys.PUT_SERIAL_ITEM.patternId())))
        .handle((ok, failure) -> {
          if (failure != null) {
            throw DynamoErrors.translate(failure);
          }
          return item;
        });
  }

  @Override
  public CompletableFuture<ProductInventory> putInventory(ProductInventory inventory) {
    return dynamo.putItem(b -> b.tableName(table).item(InventoryItems.toItem(inventory))
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
            .overrideConfiguration(DynamoMetrics.pattern(InventoryKeys.PUT_INVENTORY.patternId())))
        .handle((ok, failure) -> {
          if (failure != null) {
            throw DynamoErrors.translate(failure);
          }
          return inventory;
        });
  }

  @Override
  public CompletableFuture<ProductInventory> adjustStock(StockAdjustment adj, Instant now) {
    Map<String, AttributeValue> stockKey = InventoryItems.inventoryKey(adj.productId(), adj.warehouseId());
    long needed = Math.max(0, -adj.delta());
    TransactWriteItem update = TransactWriteItem.builder().update(u -> u
        .tableName(table)
        .key(stockKey)
        .updateExpression("SET #q = #q + :delta, #ut = :now")
        .conditionExpression("attribute_exists(#pk) AND #q >= :needed")
        .expressionAttributeNames(Map.of("#q", QUANTITY, "#ut", UPDATE_TIME, "#pk", PK))
        .expressionAttributeValues(Map.of(
            ":delta", AttributeValue.fromN(Long.toString(adj.delta())),
            ":now", AttributeValue.fromS(now.toString()),
            ":needed", AttributeValue.fromN(Long.toString(needed))))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
    TransactWriteItem record = TransactWriteItem.builder().put(p -> p
        .tableName(table)
        .item(requestRecord(adj, now))
        .conditionExpression("attribute_not_exists(#pk)")
        .expressionAttributeNames(Map.of("#pk", PK))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
    return dynamo.transactWriteItems(b -> b
            .transactItems(update, record)
            // DynamoDB's own 10-minute idempotency window; the request record covers the rest.
            .clientRequestToken(clientRequestToken(adj))
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
            .overrideConfiguration(DynamoMetrics.pattern(InventoryKeys.ADJUST_STOCK.patternId())))
        .handle((ok, failure) -> {
          if (failure != null) {
            requireReplay(adj, failure);
          }
          return adj;
        })
        // Applied now or by an earlier call with this request id: either way, answer with the stock.
        .thenCompose(this::currentStock);
  }

  private Map<String, AttributeValue> requestRecord(StockAdjustment adj, Instant now) {
    Map<String, AttributeValue> item = new HashMap<>(
        InventoryItems.key(InventoryKeys.productPk(adj.productId()), InventoryKeys.requestSk(adj.requestId())));
    item.put(ENTITY, AttributeValue.fromS("StockRequest"));
    item.put(WAREHOUSE_ID, AttributeValue.fromS(adj.warehouseId()));
    item.put(DELTA, AttributeValue.fromN(Long.toString(adj.delta())));
    item.put(CREATE_TIME, AttributeValue.fromS(now.toString()));
    item.put(SingleTable.EXPIRE_AT,
        AttributeValue.fromN(Long.toString(now.plus(REQUEST_RECORD_TTL).getEpochSecond())));
    return item;
  }

  /**
   * Returns normally when the failed transaction was a replay: the request record already exists for
   * the same change. Otherwise throws what the failure means: a reused request id, a missing stock
   * record, insufficient stock, a conflict, or an unavailable database.
   */
  private void requireReplay(StockAdjustment adj, Throwable failure) {
    Throwable cause = Failures.cause(failure);
    if (!(cause instanceof TransactionCanceledException cancelled) || !cancelled.hasCancellationReasons()) {
      throw DynamoErrors.translate(cause);
    }
    List<CancellationReason> reasons = cancelled.cancellationReasons();
    CancellationReason stock = reasons.get(0);
    CancellationReason request = reasons.get(1);
    if (CONDITION_FAILED.equals(request.code())) {
      Map<String, AttributeValue> earlier = request.item();
      boolean sameChange = earlier != null
          && adj.warehouseId().equals(earlier.get(WAREHOUSE_ID).s())
          && Long.toString(adj.delta()).equals(earlier.get(DELTA).n());
      if (sameChange) {
        return;
      }
      throw new AlreadyExistsException("REQUEST_ID_REUSED",
          "request_id " + adj.requestId() + " was already used for a different stock change",
          Map.of("request_id", adj.requestId()));
    }
    if (CONDITION_FAILED.equals(stock.code())) {
      Map<String, AttributeValue> current = stock.item();
      if (current == null || current.isEmpty()) {
        throw InventoryService.inventoryNotFound(adj.productId(), adj.warehouseId());
      }
      String available = current.get(QUANTITY).n();
      throw new FailedPreconditionException("INSUFFICIENT_STOCK",
          "cannot remove " + (-adj.delta()) + " units of product " + adj.productId() + " at warehouse "
              + adj.warehouseId() + ": only " + available + " in stock",
          Map.of("product_id", adj.productId(), "warehouse_id", adj.warehouseId(),
              "available", available, "requested", Long.toString(-adj.delta())));
    }
    if (reasons.stream().anyMatch(r -> "TransactionConflict".equals(r.code()))) {
      throw new AbortedException("TRANSACTION_CONFLICT",
          "the stock changed concurrently; retry with the same request_id");
    }
    throw DynamoErrors.translate(cause);
  }

  private CompletableFuture<ProductInventory> currentStock(StockAdjustment adj) {
    return get(InventoryKeys.ADJUST_STOCK, InventoryItems.inventoryKey(adj.productId(), adj.warehouseId()), true,
            InventoryItems::toProductInventory)
        .thenApply(found -> found.orElseThrow(() -> InventoryService.inventoryNotFound(adj.productId(), adj.warehouseId())));
  }

  private static String clientRequestToken(StockAdjustment adj) {
    // At most 36 characters are allowed: a name-based UUID of the request's scope fits any request id.
    return UUID.nameUUIDFromBytes((adj.productId() + "|" + adj.requestId()).getBytes(StandardCharsets.UTF_8)).toString();
  }

  /** GetItem of one key, counted under {@code route}'s access pattern. */
  private <T> CompletableFuture<Optional<T>> get(Route route, Map<String, AttributeValue> key, boolean consistentRead,
      Function<Map<String, AttributeValue>, T> mapper) {
    return dynamo.getItem(b -> b.tableName(table).key(key).consistentRead(consistentRead)
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
            .overrideConfiguration(DynamoMetrics.pattern(route.patternId())))
        .handle((response, failure) -> {
          if (failure != null) {
            throw DynamoErrors.translate(failure);
          }
          return response.hasItem() && !response.item().isEmpty() ? Optional.of(mapper.apply(response.item())) : Optional.empty();
        });
  }
}
