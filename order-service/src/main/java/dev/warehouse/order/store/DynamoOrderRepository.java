package dev.warehouse.order.store;

import static dev.warehouse.order.store.OrderItems.CREATE_TIME;
import static dev.warehouse.order.store.OrderItems.ENTITY;
import static dev.warehouse.order.store.OrderItems.FINGERPRINT;
import static dev.warehouse.order.store.OrderItems.ORDER_ID;
import static dev.warehouse.order.store.OrderItems.VERSION;
import static dev.warehouse.runtime.dynamo.SingleTable.EXPIRE_AT;
import static dev.warehouse.runtime.dynamo.SingleTable.PK;
import static dev.warehouse.runtime.dynamo.SingleTable.SK;

import dev.warehouse.order.domain.DateFilter;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderPageQuery;
import dev.warehouse.order.domain.OrderRepository;
import dev.warehouse.order.domain.PendingStep;
import dev.warehouse.order.domain.PlaceOrderCommand;
import dev.warehouse.order.domain.StaleOrderException;
import dev.warehouse.runtime.dynamo.ConditionFailedException;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.routing.Route;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/** {@link OrderRepository} on the single table: two copies per order, written in one transaction. */
public final class DynamoOrderRepository implements OrderRepository {

  /** How long a PlaceOrder request id is remembered (far beyond DynamoDB's 10-minute token window). */
  public static final Duration REQUEST_RECORD_TTL = Duration.ofDays(7);

  /** Positions of the items in the PlaceOrder transaction, for reading its cancellation reasons. */
  private static final int CORRIDOR = 0;
  private static final int DIRECT = 1;
  private static final int REQUEST = 2;

  private final DynamoStore store;

  public DynamoOrderRepository(DynamoStore store) {
    this.store = store;
  }

  @Override
  public CompletableFuture<Order> create(Order order, PlaceOrderCommand command, Instant now) {
    List<TransactWriteItem> items = List.of(
        putIfAbsent(OrderItems.corridorItem(order)),
        putIfAbsent(OrderItems.directItem(order)),
        putIfAbsent(requestRecord(order, command, now)));
    return store.transact("PlaceOrder", OrderKeys.PLACE_ORDER, items, failed -> isReplay(failed, command))
        .thenApply(ok -> order)
        .exceptionallyCompose(failure -> {
          Throwable cause = Failures.cause(failure);
          if (!(cause instanceof ConditionFailedException failed)) {
            return CompletableFuture.failedFuture(cause);
          }
          if (isReplay(failed, command)) {
            String placedId = failed.item(REQUEST).get(ORDER_ID).s();
            return find(placedId, true).thenApply(found -> found.orElseThrow(() ->
                new IllegalStateException("request record of " + command.requestId() + " names a missing order")));
          }
          return CompletableFuture.failedFuture(placeOrderFailure(order, command, failed));
        });
  }

  private static boolean isReplay(ConditionFailedException failed, PlaceOrderCommand command) {
    Map<String, AttributeValue> record = failed.item(REQUEST);
    return !record.isEmpty() && command.fingerprint().equals(record.get(FINGERPRINT).s());
  }

  /** What a failed condition of PlaceOrder means; the message names which copy was in the way. */
  private static RuntimeException placeOrderFailure(Order order, PlaceOrderCommand command, ConditionFailedException failed) {
    if (failed.failed(REQUEST)) {
      return command.requestIdReused();
    }
    List<String> existing = new ArrayList<>();
    if (failed.failed(DIRECT)) {
      existing.add("direct copy (" + OrderKeys.direct(order.orderId()).pk() + ")");
    }
    if (failed.failed(CORRIDOR)) {
      existing.add("customer copy (" + OrderKeys.customerPk(order.customerId()) + ")");
    }
    return new AlreadyExistsException("ORDER_ALREADY_EXISTS",
        "order " + order.orderId() + " already exists: its " + String.join(" and ", existing) + " is stored",
        Map.of("order_id", order.orderId()));
  }

  @Override
  public CompletableFuture<Optional<Order>> find(String orderId, boolean consistentRead) {
    return store.get(OrderKeys.ORDER_BY_ID, OrderKeys.direct(orderId), consistentRead, OrderItems::toOrder);
  }

  @Override
  public CompletableFuture<Page<Order>> listByCustomer(String customerId, OrderPageQuery query) {
    String pk = OrderKeys.customerPk(customerId);
    Map<String, AttributeValue> values = new HashMap<>();
    values.put(":pk", AttributeValue.fromS(pk));
    String sortCondition;
    if (query.filter() instanceof DateFilter.Range range) {
      sortCondition = "#sk BETWEEN :from AND :until";
      values.put(":from", AttributeValue.fromS(range.start().map(OrderKeys::corridorFrom).orElse(OrderKeys.corridorPrefix(""))));
      values.put(":until", AttributeValue.fromS(range.end().map(OrderKeys::corridorUntil).orElse(OrderKeys.corridorEnd())));
    } else {
      sortCondition = "begins_with(#sk, :prefix)";
      String datePrefix = query.filter() instanceof DateFilter.Prefix prefix ? prefix.prefix() : "";
      values.put(":prefix", AttributeValue.fromS(OrderKeys.corridorPrefix(datePrefix)));
    }
    QueryRequest request = QueryRequest.builder()
        .keyConditionExpression("#pk = :pk AND " + sortCondition)
        .expressionAttributeNames(Map.of("#pk", PK, "#sk", SK))
        .expressionAttributeValues(values)
        .scanIndexForward(false) // newest first: the sort key starts with the date
        .consistentRead(query.consistentRead())
        .build();
    String scope = OrderKeys.ORDERS_OF_CUSTOMER.patternId() + "|" + pk + "|" + query.filter().canonical();
    return store.query(OrderKeys.ORDERS_OF_CUSTOMER, request, query.pageSize(), query.pageToken(), scope, List.of(PK, SK),
        Map.entry(PK, pk), OrderItems::toOrder);
  }

  @Override
  public CompletableFuture<Order> finishPlacing(Order current, Order finished) {
    return save("PlaceOrder", OrderKeys.PLACE_ORDER, current, finished);
  }

  @Override
  public CompletableFuture<Order> changeStatus(Order current, Order updated) {
    return save("UpdateOrderStatus", OrderKeys.UPDATE_STATUS, current, updated);
  }

  /**
   * Both copies from {@code current} to {@code updated} at once, each conditioned on its version, and the
   * direct copy's stock step (with its A10 entry) set to what {@code updated} owes, or removed.
   */
  private CompletableFuture<Order> save(String operation, Route route, Order current, Order updated) {
    List<TransactWriteItem> items = List.of(
        updateAtVersion(OrderKeys.direct(current.orderId()), current, updated, true),
        updateAtVersion(OrderKeys.corridor(current.customerId(), current.orderDate(), current.orderId()), current, updated,
            false));
    return store.transact(operation, route, items, failed -> false)
        .thenApply(ok -> updated)
        .exceptionally(failure -> {
          Throwable cause = Failures.cause(failure);
          if (!(cause instanceof ConditionFailedException failed)) {
            throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
          }
          for (int i = 0; i < items.size(); i++) {
            if (failed.failed(i) && failed.item(i).isEmpty()) {
              // A copy is missing: the data is broken, not busy. The consistency audit reports it.
              throw new IllegalStateException("order " + current.orderId() + " lacks one of its two copies");
            }
          }
          throw new StaleOrderException(current.orderId());
        });
  }

  private TransactWriteItem putIfAbsent(Map<String, AttributeValue> item) {
    return TransactWriteItem.builder().put(p -> p
        .tableName(store.table())
        .item(item)
        .conditionExpression("attribute_not_exists(#pk)")
        .expressionAttributeNames(Map.of("#pk", PK))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
  }

  /**
   * An Update of one copy from {@code current} to {@code updated}, conditioned on its version. The direct
   * copy also gets what only it holds (a rejection's shortages, the step owed and its A10 entry), and loses
   * a step no longer owed.
   */
  private TransactWriteItem updateAtVersion(TableKey key, Order current, Order updated, boolean direct) {
    Map<String, AttributeValue> set = new LinkedHashMap<>(OrderItems.changing(updated));
    List<String> remove = new ArrayList<>();
    if (direct) {
      set.putAll(OrderItems.directOnly(updated));
      if (updated.pending().isEmpty()) {
        remove.addAll(OrderItems.stepAttributes());
      }
    }
    Map<String, String> names = new HashMap<>(Map.of("#version", VERSION));
    Map<String, AttributeValue> values = new HashMap<>(Map.of(":current", AttributeValue.fromN(Long.toString(current.version()))));
    List<String> assignments = new ArrayList<>();
    int i = 0;
    for (Map.Entry<String, AttributeValue> e : set.entrySet()) {
      names.put("#a" + i, e.getKey());
      values.put(":a" + i, e.getValue());
      assignments.add("#a" + i + " = :a" + i);
      i++;
    }
    List<String> removals = new ArrayList<>();
    for (String name : remove) {
      names.put("#r" + removals.size(), name);
      removals.add("#r" + removals.size());
    }
    String expression = "SET " + String.join(", ", assignments) + (removals.isEmpty() ? "" : " REMOVE " + String.join(", ", removals));
    return TransactWriteItem.builder().update(u -> u
        .tableName(store.table())
        .key(key.attributes())
        .updateExpression(expression)
        .conditionExpression("#version = :current")
        .expressionAttributeNames(names)
        .expressionAttributeValues(values)
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
  }

  @Override
  public CompletableFuture<Boolean> stepDone(Order order) {
    PendingStep step = order.pending().orElseThrow();
    Map<String, String> names = new HashMap<>(Map.of("#version", VERSION, "#step", OrderItems.STEP));
    List<String> removals = new ArrayList<>();
    for (String name : OrderItems.stepAttributes()) {
      names.put("#r" + removals.size(), name);
      removals.add("#r" + removals.size());
    }
    UpdateItemRequest request = UpdateItemRequest.builder()
        .key(OrderKeys.direct(order.orderId()).attributes())
        .updateExpression("REMOVE " + String.join(", ", removals))
        .conditionExpression("#version = :version AND #step = :step")
        .expressionAttributeNames(names)
        .expressionAttributeValues(Map.of(
            ":version", AttributeValue.fromN(Long.toString(order.version())),
            ":step", AttributeValue.fromS(step.step().name())))
        .build();
    return store.update(OrderKeys.UPDATE_STATUS, request).thenApply(ok -> true).exceptionally(failure -> {
      if (Failures.cause(failure) instanceof ConditionFailedException) {
        return false; // done already, by the call or the recovery
      }
      throw failure instanceof RuntimeException re ? re : new java.util.concurrent.CompletionException(failure);
    });
  }

  @Override
  public CompletableFuture<Page<Order>> listStalled(Instant now, int pageSize, String pageToken) {
    String until = OrderKeys.stepsDueBy(now);
    List<QueryRequest> shards = java.util.stream.IntStream.range(0, OrderKeys.STEP_SHARDS.shardCount())
        .mapToObj(shard -> QueryRequest.builder()
            .indexName(SingleTable.GSI1)
            .keyConditionExpression("#pk = :pk AND #sk BETWEEN :from AND :to")
            .expressionAttributeNames(Map.of("#pk", SingleTable.GSI1_PK, "#sk", SingleTable.GSI1_SK))
            .expressionAttributeValues(Map.of(
                ":pk", AttributeValue.fromS(OrderKeys.stepShardPk(shard)),
                ":from", AttributeValue.fromS(OrderKeys.stepsFrom()),
                ":to", AttributeValue.fromS(until)))
            .build())
        .toList();
    String scope = OrderKeys.STALLED_ORDERS.patternId() + "|shards=" + shards.size();
    return store.queryShards(OrderKeys.STALLED_ORDERS, DynamoStore.ShardKeys.GSI1, shards, pageSize, pageToken, scope,
        OrderItems::toOrder);
  }

  private static Map<String, AttributeValue> requestRecord(Order order, PlaceOrderCommand command, Instant now) {
    Map<String, AttributeValue> item = new HashMap<>(OrderKeys.orderRequest(command.customerId(), command.requestId()).attributes());
    item.put(ENTITY, AttributeValue.fromS("OrderRequest"));
    item.put(ORDER_ID, AttributeValue.fromS(order.orderId()));
    item.put(FINGERPRINT, AttributeValue.fromS(command.fingerprint()));
    item.put(CREATE_TIME, AttributeValue.fromS(now.toString()));
    item.put(EXPIRE_AT, AttributeValue.fromN(Long.toString(now.plus(REQUEST_RECORD_TTL).getEpochSecond())));
    return item;
  }
}
