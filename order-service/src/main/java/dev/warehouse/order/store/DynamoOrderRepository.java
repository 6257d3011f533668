package dev.warehouse.order.store;

import dev.warehouse.runtime.error.Failures;
import static dev.warehouse.order.store.OrderItems.CREATE_TIME;
import static dev.warehouse.order.store.OrderItems.ENTITY;
import static dev.warehouse.order.store.OrderItems.FINGERPRINT;
import static dev.warehouse.order.store.OrderItems.ORDER_ID;
import static dev.warehouse.order.store.OrderItems.STATUS;
import static dev.warehouse.order.store.OrderItems.UPDATE_TIME;
import static dev.warehouse.order.store.OrderItems.VERSION;
import static dev.warehouse.runtime.dynamo.SingleTable.EXPIRE_AT;
import static dev.warehouse.runtime.dynamo.SingleTable.PK;
import static dev.warehouse.runtime.dynamo.SingleTable.SK;

import dev.warehouse.order.domain.DateFilter;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderPageQuery;
import dev.warehouse.order.domain.OrderRepository;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.domain.PlaceOrderCommand;
import dev.warehouse.order.domain.StaleOrderException;
import dev.warehouse.runtime.dynamo.DynamoErrors;
import dev.warehouse.runtime.dynamo.PagedQuery;
import dev.warehouse.runtime.dynamo.TransactionRunner;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.metrics.DynamoMetrics;
import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.paging.PageTokenCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/** {@link OrderRepository} on the single table: two copies per order, written in one transaction. */
public final class DynamoOrderRepository implements OrderRepository {

  /** How long a PlaceOrder request id is remembered (far beyond DynamoDB's 10-minute token window). */
  public static final Duration REQUEST_RECORD_TTL = Duration.ofDays(7);

  private static final String CONDITION_FAILED = "ConditionalCheckFailed";
  /** Positions of the items in the PlaceOrder transaction, for reading its cancellation reasons. */
  private static final int CORRIDOR = 0;
  private static final int DIRECT = 1;
  private static final int REQUEST = 2;

  private final DynamoDbAsyncClient dynamo;
  private final String table;
  private final TransactionRunner transactions;
  private final PagedQuery pages;

  public DynamoOrderRepository(DynamoDbAsyncClient dynamo, String table, TransactionRunner transactions,
      PageTokenCodec pageTokens) {
    this.dynamo = dynamo;
    this.table = table;
    this.transactions = transactions;
    this.pages = new PagedQuery(dynamo, pageTokens, List.of(PK, SK));
  }

  @Override
  public CompletableFuture<Order> create(Order order, PlaceOrderCommand command, Instant now) {
    TransactWriteItemsRequest request = TransactWriteItemsRequest.builder()
        .transactItems(
            putIfAbsent(OrderItems.corridorItem(order)),
            putIfAbsent(OrderItems.directItem(order)),
            putIfAbsent(requestRecord(order, command, now)))
        // DynamoDB's own 10-minute idempotency; the request record covers any later retry.
        .clientRequestToken(UUID.nameUUIDFromBytes(
            (command.customerId() + "|" + command.requestId()).getBytes(StandardCharsets.UTF_8)).toString())
        .build();
    return transactions.write("PlaceOrder", OrderKeys.PLACE_ORDER.patternId(), request, cancelled -> isReplay(cancelled, command))
        .handle((ok, failure) -> failure)
        .thenCompose(failure -> {
          if (failure == null) {
            return CompletableFuture.completedFuture(order);
          }
          TransactionCanceledException cancelled = cancelledBy(failure);
          if (isReplay(cancelled, command)) {
            String placedId = cancelled.cancellationReasons().get(REQUEST).item().get(ORDER_ID).s();
            return find(placedId, true).thenApply(found -> found.orElseThrow(() ->
                new IllegalStateException("request record of " + command.requestId() + " names a missing order")));
          }
          throw placeOrderFailure(order, command, failure, cancelled);
        });
  }

  private static boolean isReplay(TransactionCanceledException cancelled, PlaceOrderCommand command) {
    if (cancelled == null || !cancelled.hasCancellationReasons()) {
      return false;
    }
    CancellationReason request = cancelled.cancellationReasons().get(REQUEST);
    return CONDITION_FAILED.equals(request.code()) && request.item() != null
        && command.fingerprint().equals(request.item().get(FINGERPRINT).s());
  }

  /** What a failed PlaceOrder means; the message names which copy was in the way. */
  private static RuntimeException placeOrderFailure(Order order, PlaceOrderCommand command, Throwable failure,
      TransactionCanceledException cancelled) {
    if (cancelled == null || !cancelled.hasCancellationReasons()) {
      return DynamoErrors.translate(failure);
    }
    List<CancellationReason> reasons = cancelled.cancellationReasons();
    if (CONDITION_FAILED.equals(reasons.get(REQUEST).code())) {
      return new AlreadyExistsException("REQUEST_ID_REUSED",
          "request_id " + command.requestId() + " already placed a different order",
          Map.of("request_id", command.requestId()));
    }
    List<String> existing = new ArrayList<>();
    if (CONDITION_FAILED.equals(reasons.get(DIRECT).code())) {
      existing.add("direct copy (ORDER#" + order.orderId() + ")");
    }
    if (CONDITION_FAILED.equals(reasons.get(CORRIDOR).code())) {
      existing.add("customer copy (CUSTOMER#" + order.customerId() + ")");
    }
    if (!existing.isEmpty()) {
      return new AlreadyExistsException("ORDER_ALREADY_EXISTS",
          "order " + order.orderId() + " already exists: its " + String.join(" and ", existing) + " is stored",
          Map.of("order_id", order.orderId()));
    }
    return transientFailure(reasons, failure);
  }

  @Override
  public CompletableFuture<Optional<Order>> find(String orderId, boolean consistentRead) {
    return transactions.read(() -> dynamo.getItem(b -> b.tableName(table).key(OrderItems.directKey(orderId))
            .consistentRead(consistentRead)
            .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
            .overrideConfiguration(DynamoMetrics.pattern(OrderKeys.ORDER_BY_ID.patternId()))))
        .handle((response, failure) -> {
          if (failure != null) {
            throw DynamoErrors.translate(failure);
          }
          return response.hasItem() && !response.item().isEmpty()
              ? Optional.of(OrderItems.toOrder(response.item())) : Optional.empty();
        });
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
        .tableName(table)
        .keyConditionExpression("#pk = :pk AND " + sortCondition)
        .expressionAttributeNames(Map.of("#pk", PK, "#sk", SK))
        .expressionAttributeValues(values)
        .scanIndexForward(false) // newest first: the sort key starts with the date
        .consistentRead(query.consistentRead())
        .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
        .overrideConfiguration(DynamoMetrics.pattern(OrderKeys.ORDERS_OF_CUSTOMER.patternId()))
        .build();
    String scope = OrderKeys.ORDERS_OF_CUSTOMER.patternId() + "|" + pk + "|" + query.filter().canonical();
    return pages.page(request, query.pageSize(), query.pageToken(), scope, Map.entry(PK, pk), OrderItems::toOrder);
  }

  @Override
  public CompletableFuture<Order> updateStatus(Order current, OrderStatus next, Instant now) {
    Order updated = current.movedTo(next, now);
    TransactWriteItemsRequest request = TransactWriteItemsRequest.builder()
        .transactItems(
            updateAtVersion(OrderItems.directKey(current.orderId()), current, updated),
            updateAtVersion(OrderItems.corridorKey(current.customerId(), current.orderDate(), current.orderId()),
                current, updated))
        .build();
    return transactions.write("UpdateOrderStatus", OrderKeys.UPDATE_STATUS.patternId(), request, cancelled -> false)
        .handle((ok, failure) -> {
          if (failure == null) {
            return updated;
          }
          TransactionCanceledException cancelled = cancelledBy(failure);
          if (cancelled != null && cancelled.hasCancellationReasons()) {
            List<CancellationReason> reasons = cancelled.cancellationReasons();
            for (CancellationReason reason : reasons) {
              if (CONDITION_FAILED.equals(reason.code()) && (reason.item() == null || reason.item().isEmpty())) {
                // A copy is missing: the data is broken, not busy. The consistency audit reports it.
                throw new IllegalStateException("order " + current.orderId() + " lacks one of its two copies");
              }
            }
            if (reasons.stream().anyMatch(r -> CONDITION_FAILED.equals(r.code()))) {
              throw new StaleOrderException(current.orderId());
            }
            throw transientFailure(reasons, failure);
          }
          throw DynamoErrors.translate(failure);
        });
  }

  private TransactWriteItem putIfAbsent(Map<String, AttributeValue> item) {
    return TransactWriteItem.builder().put(p -> p
        .tableName(table)
        .item(item)
        .conditionExpression("attribute_not_exists(#pk)")
        .expressionAttributeNames(Map.of("#pk", PK))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
  }

  private TransactWriteItem updateAtVersion(Map<String, AttributeValue> key, Order current, Order updated) {
    return TransactWriteItem.builder().update(u -> u
        .tableName(table)
        .key(key)
        .updateExpression("SET #status = :status, #version = :next, #ut = :now")
        .conditionExpression("#version = :current")
        .expressionAttributeNames(Map.of("#status", STATUS, "#version", VERSION, "#ut", UPDATE_TIME))
        .expressionAttributeValues(Map.of(
            ":status", AttributeValue.fromS(updated.status().name()),
            ":next", AttributeValue.fromN(Long.toString(updated.version())),
            ":now", AttributeValue.fromS(updated.updateTime().toString()),
            ":current", AttributeValue.fromN(Long.toString(current.version()))))
        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
        .build();
  }

  private static Map<String, AttributeValue> requestRecord(Order order, PlaceOrderCommand command, Instant now) {
    Map<String, AttributeValue> item = new HashMap<>(
        OrderItems.key(OrderKeys.customerPk(command.customerId()), OrderKeys.requestSk(command.requestId())));
    item.put(ENTITY, AttributeValue.fromS("OrderRequest"));
    item.put(ORDER_ID, AttributeValue.fromS(order.orderId()));
    item.put(FINGERPRINT, AttributeValue.fromS(command.fingerprint()));
    item.put(CREATE_TIME, AttributeValue.fromS(now.toString()));
    item.put(EXPIRE_AT, AttributeValue.fromN(Long.toString(now.plus(REQUEST_RECORD_TTL).getEpochSecond())));
    return item;
  }

  /** The status of a transaction that kept failing for a transient reason after every retry. */
  private static RuntimeException transientFailure(List<CancellationReason> reasons, Throwable failure) {
    if (reasons.stream().anyMatch(r -> "TransactionConflict".equals(r.code()))) {
      return new AbortedException("TRANSACTION_CONFLICT", "the order was being changed by another transaction; retry");
    }
    if (reasons.stream().anyMatch(r -> "ThrottlingError".equals(r.code()))) {
      return DynamoErrors.throttled(failure);
    }
    return DynamoErrors.translate(failure);
  }

  private static TransactionCanceledException cancelledBy(Throwable failure) {
    Throwable cause = Failures.cause(failure);
    return cause instanceof TransactionCanceledException cancelled ? cancelled : null;
  }
}
