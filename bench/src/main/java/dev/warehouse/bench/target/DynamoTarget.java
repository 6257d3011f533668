package dev.warehouse.bench.target;

import static dev.warehouse.bench.data.DataSet.customer;
import static dev.warehouse.bench.data.DataSet.order;
import static dev.warehouse.bench.data.DataSet.product;
import static dev.warehouse.bench.data.DataSet.serial;
import static dev.warehouse.bench.data.DataSet.warehouse;
import static dev.warehouse.bench.data.DataSet.warehouseOf;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.Call;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.store.OrderItems;
import dev.warehouse.order.store.OrderKeys;
import dev.warehouse.runtime.dynamo.SingleTable;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongToIntFunction;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * The same key lookups the services make, straight through the AWS SDK: the floor under every layer.
 * Requests ask for consumed capacity, so the cost scenario can read it from the responses.
 */
public final class DynamoTarget implements Target {

  private final DynamoDbAsyncClient dynamo;
  private final String table;
  private final DataSet data;

  public DynamoTarget(DynamoDbAsyncClient dynamo, String table, DataSet data) {
    this.dynamo = dynamo;
    this.table = table;
    this.data = data;
  }

  @Override
  public String name() {
    return "dynamodb";
  }

  @Override
  public Call call(Op op, LongToIntFunction key) {
    return switch (op) {
      case GET_SERIAL_ITEM -> i -> get(InventoryKeys.serialItem(serial(key.applyAsInt(i) % data.serials)).attributes());
      case GET_PRODUCT_INVENTORY -> i -> {
        int p = key.applyAsInt(i) % data.products;
        return get(InventoryKeys.stock(product(p), warehouseOf(p, 0)).attributes());
      };
      case LIST_PRODUCT_WAREHOUSES -> i -> query(null, SingleTable.PK, SingleTable.SK, InventoryKeys.productPk(product(key.applyAsInt(i) % data.products)),
          InventoryKeys.warehousesPrefix(), true);
      case LIST_WAREHOUSE_PRODUCTS -> i -> query(SingleTable.GSI1, SingleTable.GSI1_PK, SingleTable.GSI1_SK,
          InventoryKeys.warehouseGsiPk(warehouse(key.applyAsInt(i) % DataSet.WAREHOUSES)), InventoryKeys.productsPrefix(), true);
      case LIST_CUSTOMER_ORDERS -> i -> query(null, SingleTable.PK, SingleTable.SK, OrderKeys.customerPk(customer(key.applyAsInt(i) % data.customers)),
          OrderKeys.corridorPrefix(""), false);
      case GET_ORDER -> i -> get(OrderItems.directKey(order(key.applyAsInt(i) % data.customers, 0)));
      case PLACE_ORDER -> i -> placeOrder(key.applyAsInt(i));
      case UPDATE_ORDER_STATUS, LIST_LOW_STOCK, PUT_SERIAL_ITEM, PUT_PRODUCT_INVENTORY, ADJUST_STOCK ->
          throw new UnsupportedOperationException(op + " is measured through the services");
    };
  }

  /** The naive alternative to A4: scan the whole table, filtering on the warehouse. The baseline of the cost scenario. */
  public CompletableFuture<long[]> scanForWarehouse(int w) {
    return scanPage(w, null, new long[3]);
  }

  /** Accumulates {scanned, returned, capacity units x 10} over every page of the scan. */
  private CompletableFuture<long[]> scanPage(int w, Map<String, AttributeValue> start, long[] totals) {
    ScanRequest.Builder scan = ScanRequest.builder().tableName(table)
        .filterExpression("#pk = :pk")
        .expressionAttributeNames(Map.of("#pk", SingleTable.GSI1_PK))
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS(InventoryKeys.warehouseGsiPk(warehouse(w)))))
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
    if (start != null) {
      scan.exclusiveStartKey(start);
    }
    return dynamo.scan(scan.build()).thenCompose(page -> {
      totals[0] += page.scannedCount();
      totals[1] += page.count();
      totals[2] += page.consumedCapacity() == null ? 0 : Math.round(page.consumedCapacity().capacityUnits() * 10);
      return page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty()
          ? scanPage(w, page.lastEvaluatedKey(), totals) : CompletableFuture.completedFuture(totals);
    });
  }

  private CompletableFuture<?> get(Map<String, AttributeValue> key) {
    return dynamo.getItem(b -> b.tableName(table).key(key).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL));
  }

  /** One page of 25, read as the services read it: 26 items, to know whether another page follows. */
  private CompletableFuture<?> query(String index, String pkName, String skName, String pk, String prefix, boolean forward) {
    return dynamo.query(QueryRequest.builder().tableName(table).indexName(index)
        .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
        .expressionAttributeNames(Map.of("#pk", pkName, "#sk", skName))
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS(pk), ":prefix", AttributeValue.fromS(prefix)))
        .scanIndexForward(forward)
        .limit(26)
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .build());
  }

  /**
   * PlaceOrder's DynamoDB work straight from the client, call for call as the two services make it, in
   * sequence: the order written PENDING (both copies and the request record), the hold's look for its
   * reservation and read of the stock, the hold (its reservation and the stock's reserved units), the
   * confirm, and the order written PLACED. Six calls: the floor under PlaceOrder, as one lookup is under a read.
   */
  private CompletableFuture<?> placeOrder(int k) {
    Instant now = Instant.now();
    String customerId = customer(k % data.customers);
    int p = k % data.products;
    Order order = new Order("B-" + UUID.randomUUID(), customerId, LocalDate.parse("2026-12-02"), OrderStatus.PLACED,
        new Money("EUR", 25, 0), 1, now, now, java.util.List.of(), 0, java.util.Optional.empty(), java.util.Optional.empty());
    Map<String, AttributeValue> request = new HashMap<>(OrderKeys.orderRequest(customerId, UUID.randomUUID().toString()).attributes());
    request.put("order_id", AttributeValue.fromS(order.orderId()));
    Map<String, AttributeValue> reservation = InventoryKeys.reservation(order.orderId()).attributes();
    Map<String, AttributeValue> stock = InventoryKeys.stock(product(p), warehouseOf(p, 0)).attributes();
    return dynamo.transactWriteItems(b -> b
            .transactItems(putIfAbsent(OrderItems.corridorItem(order)), putIfAbsent(OrderItems.directItem(order)), putIfAbsent(request))
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL))
        .thenCompose(pending -> dynamo.getItem(b -> b.tableName(table).key(reservation).consistentRead(true)
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)))
        .thenCompose(none -> dynamo.batchGetItem(b -> b.requestItems(Map.of(table,
            KeysAndAttributes.builder().keys(stock).consistentRead(true).build()))
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)))
        .thenCompose(read -> {
          Map<String, AttributeValue> held = new HashMap<>(reservation);
          held.put("status", AttributeValue.fromS("HELD"));
          return dynamo.transactWriteItems(b -> b.transactItems(putIfAbsent(held),
                  update(stock, "ADD reserved :one", Map.of(":one", AttributeValue.fromN("1"))))
              .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL));
        })
        .thenCompose(hold -> dynamo.updateItem(b -> b.tableName(table).key(reservation)
            .updateExpression("SET #s = :confirmed").expressionAttributeNames(Map.of("#s", "status"))
            .expressionAttributeValues(Map.of(":confirmed", AttributeValue.fromS("CONFIRMED")))
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)))
        .thenCompose(confirmed -> dynamo.transactWriteItems(b -> b.transactItems(
                update(OrderItems.corridorKey(customerId, order.orderDate(), order.orderId()), "SET #s = :placed",
                    Map.of(":placed", AttributeValue.fromS("PLACED"))),
                update(OrderItems.directKey(order.orderId()), "SET #s = :placed", Map.of(":placed", AttributeValue.fromS("PLACED"))))
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)));
  }

  private TransactWriteItem update(Map<String, AttributeValue> key, String expression, Map<String, AttributeValue> values) {
    Map<String, String> names = expression.contains("#s") ? Map.of("#s", "status") : null;
    return TransactWriteItem.builder().update(u -> u.tableName(table).key(key).updateExpression(expression)
        .expressionAttributeNames(names).expressionAttributeValues(values)).build();
  }

  private TransactWriteItem putIfAbsent(Map<String, AttributeValue> item) {
    return TransactWriteItem.builder().put(p -> p.tableName(table).item(item)
        .conditionExpression("attribute_not_exists(#pk)").expressionAttributeNames(Map.of("#pk", SingleTable.PK))).build();
  }
}
