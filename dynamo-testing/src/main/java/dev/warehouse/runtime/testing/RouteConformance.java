package dev.warehouse.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.routing.v1.SortKeyCondition;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.routing.Route;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Checks recorded DynamoDB requests against the route an RPC declares: exactly the declared
 * operations, in order, each on the declared key shape, rendered with the call's own field values.
 */
public final class RouteConformance {

  private RouteConformance() {}

  /** The operation a recorded request is, or null for anything a route may not declare (Scan, say). */
  /** The key a route declares, its templates rendered with request fields by name (for key-function tests). */
  public static TableKey declaredKey(Route route, Map<String, String> fields) {
    return new TableKey(route.partitionKey().render(fields), route.sortKey().render(fields));
  }

  /** The key of an item a route also writes, rendered the same way. */
  public static TableKey declaredKey(Route.ItemKey key, Map<String, String> fields) {
    return new TableKey(key.partitionKey().render(fields), key.sortKey().render(fields));
  }

  public static Operation operationOf(SdkRequest request) {
    if (request instanceof GetItemRequest) {
      return Operation.OPERATION_GET_ITEM;
    } else if (request instanceof BatchGetItemRequest) {
      return Operation.OPERATION_BATCH_GET_ITEM;
    } else if (request instanceof QueryRequest) {
      return Operation.OPERATION_QUERY;
    } else if (request instanceof PutItemRequest) {
      return Operation.OPERATION_PUT_ITEM;
    } else if (request instanceof UpdateItemRequest) {
      return Operation.OPERATION_UPDATE_ITEM;
    } else if (request instanceof TransactWriteItemsRequest) {
      return Operation.OPERATION_TRANSACT_WRITE_ITEMS;
    } else if (request instanceof TransactGetItemsRequest) {
      return Operation.OPERATION_TRANSACT_GET_ITEMS;
    } else if (request instanceof software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest) {
      return Operation.OPERATION_DELETE_ITEM;
    }
    return null;
  }

  /**
   * Asserts that {@code recorded} is exactly what {@code route} declares for a call whose request and
   * response carried {@code messages}.
   */
  public static void assertFollows(Route route, List<SdkRequest> recorded, Message... messages) {
    Map<String, String> values = fieldValues(messages);
    String where = route.patternId() + " " + route.methodName();
    if (route.fanOut().isPresent()) {
      assertFansOut(route, recorded, where);
      return;
    }
    // A split stock's snapshot (TransactGetItems of its buckets) is sent only when what was read asks for it.
    assertThat(recorded.stream().map(RouteConformance::operationOf)
        .filter(op -> !route.splitOperations().contains(op) || route.operations().contains(op)).toList())
        .as(where + ": operations").containsExactlyElementsOf(route.operations());
    assertThat(recorded).as(where + ": operations besides the declared ones").extracting(RouteConformance::operationOf)
        .allSatisfy(op -> assertThat(route.operations().contains(op) || route.splitOperations().contains(op)).isTrue());

    String pk = route.partitionKey().render(values);
    // Keys rendered from the call's fields, and from each element of its repeated messages (an order's
    // lines), each element's fields taking precedence over the call's.
    List<Map<String, String>> renderings = new java.util.ArrayList<>(List.of(values));
    for (Map<String, String> element : repeatedValues(messages)) {
      Map<String, String> merged = new HashMap<>(values);
      merged.putAll(element);
      renderings.add(merged);
    }
    Set<List<String>> readable = new HashSet<>();
    readable.add(mainKey(route, values));
    List<Route.ItemKey> byKey = new java.util.ArrayList<>(route.alsoWrites());
    byKey.addAll(route.alsoReads());
    for (Map<String, String> rendering : renderings) {
      byKey.stream().filter(k -> renders(k, rendering))
          .forEach(k -> readable.add(List.of(k.partitionKey().render(rendering), k.sortKey().render(rendering))));
    }
    // Keys with a part no request field gives (a stock bucket's index) are read on their declared shape.
    List<Route.ItemKey> shapes = byKey.stream().filter(k -> renderings.stream().noneMatch(r -> renders(k, r))).toList();
    java.util.function.Predicate<List<String>> mayRead = key -> readable.contains(key) || shapes.stream().anyMatch(k ->
        k.partitionKey().pattern(values).matcher(key.get(0)).matches() && k.sortKey().pattern(values).matcher(key.get(1)).matches());
    Set<List<String>> writtenInTransactions = new HashSet<>();
    Set<List<String>> requiredInTransactions = new HashSet<>();
    for (SdkRequest request : recorded) {
      if (request instanceof GetItemRequest get) {
        assertThat(mayRead.test(keyOf(get.key()))).as(where + ": GetItem key " + keyOf(get.key()) + " is declared").isTrue();
      } else if (request instanceof BatchGetItemRequest batch) {
        List<List<String>> keys = batch.requestItems().values().stream()
            .flatMap(k -> k.keys().stream()).map(RouteConformance::keyOf).toList();
        assertThat(keys).as(where + ": BatchGetItem keys").isNotEmpty()
            .allSatisfy(k -> assertThat(mayRead.test(k)).as(where + ": BatchGetItem key " + k + " is declared").isTrue());
      } else if (request instanceof TransactGetItemsRequest snapshot) {
        List<List<String>> keys = snapshot.transactItems().stream().map(i -> keyOf(i.get().key())).toList();
        assertThat(keys).as(where + ": TransactGetItems keys").isNotEmpty()
            .allSatisfy(k -> assertThat(mayRead.test(k)).as(where + ": TransactGetItems key " + k + " is declared").isTrue());
      } else if (request instanceof PutItemRequest put) {
        assertThat(keyOf(put.item())).as(where + ": PutItem key").isEqualTo(mainKey(route, values));
      } else if (request instanceof UpdateItemRequest update) {
        assertThat(keyOf(update.key())).as(where + ": UpdateItem key").isEqualTo(mainKey(route, values));
      } else if (request instanceof QueryRequest query) {
        assertThat(query.indexName()).as(where + ": index").isEqualTo(route.index().orElse(null));
        String partitionName = query.expressionAttributeNames().get("#pk");
        assertThat(partitionName).as(where + ": partition attribute")
            .isEqualTo(route.index().isPresent() ? SingleTable.GSI1_PK : SingleTable.PK);
        assertThat(query.expressionAttributeValues().get(":pk").s()).as(where + ": partition").isEqualTo(pk);
        assertThat(query.keyConditionExpression()).as(where + ": key condition").startsWith("#pk = :pk");
        if (query.keyConditionExpression().contains("begins_with")) {
          assertThat(route.sortKeyConditions()).contains(SortKeyCondition.SORT_KEY_CONDITION_BEGINS_WITH);
          assertThat(query.expressionAttributeValues().get(":prefix").s()).as(where + ": sort-key prefix")
              .startsWith(route.sortKey().prefix());
        } else {
          assertThat(route.sortKeyConditions()).contains(SortKeyCondition.SORT_KEY_CONDITION_BETWEEN);
          assertThat(query.keyConditionExpression()).contains("BETWEEN");
        }
      } else if (request instanceof TransactWriteItemsRequest transaction) {
        // Keys the request's fields render must be written; the others (a marker, whose shard and
        // quantity are no request field) may be, on their declared shape. Each item is written as its
        // key declares (a Put, an Update …): the IAM policies allow no other.
        Map<List<String>, List<Operation>> required = new HashMap<>();
        required.put(mainKey(route, values), route.writes());
        List<Route.ItemKey> optional = new java.util.ArrayList<>();
        for (Route.ItemKey k : route.alsoWrites()) {
          boolean rendered = false;
          for (Map<String, String> rendering : renderings) {
            if (renders(k, rendering)) {
              required.put(List.of(k.partitionKey().render(rendering), k.sortKey().render(rendering)), k.writes());
              rendered = true;
            }
          }
          if (!rendered) {
            optional.add(k);
          }
        }
        requiredInTransactions.addAll(required.keySet());
        for (TransactWriteItem item : transaction.transactItems()) {
          List<String> key = keyOf(item);
          Operation kind = kindOf(item);
          writtenInTransactions.add(key);
          if (required.containsKey(key)) {
            assertThat(required.get(key)).as(where + ": how the transaction may write " + key).contains(kind);
          } else {
            assertThat(optional).as(where + ": transaction key " + key + " is declared, written as " + kind).anySatisfy(k -> {
              assertThat(key.get(0)).matches(k.partitionKey().pattern(values));
              assertThat(key.get(1)).matches(k.sortKey().pattern(values));
              assertThat(k.writes()).contains(kind);
            });
          }
        }
      }
    }
    // A call may send more than one transaction (PlaceOrder: the PENDING order with its request record,
    // then the order PLACED): together they write every declared key.
    assertThat(writtenInTransactions).as(where + ": transaction keys").containsAll(requiredInTransactions);
  }

  /**
   * Asserts that requests a service sent for {@code route} off any call (a split stock's rebalance) use
   * only the route's operations, on its declared key shapes, each transaction item written as declared.
   */
  public static void assertBackground(Route route, List<SdkRequest> recorded) {
    String where = route.patternId() + " " + route.methodName() + " (background)";
    List<Route.ItemKey> keys = new java.util.ArrayList<>(List.of(route.mainKey()));
    keys.addAll(route.alsoWrites());
    keys.addAll(route.alsoReads());
    java.util.function.Function<List<String>, List<Route.ItemKey>> shapesOf = key -> keys.stream()
        .filter(k -> k.partitionKey().pattern(Map.of()).matcher(key.get(0)).matches()
            && k.sortKey().pattern(Map.of()).matcher(key.get(1)).matches())
        .toList();
    for (SdkRequest request : recorded) {
      Operation op = operationOf(request);
      assertThat(route.operations().contains(op) || route.splitOperations().contains(op))
          .as(where + ": operation " + op).isTrue();
      if (request instanceof GetItemRequest get) {
        assertThat(shapesOf.apply(keyOf(get.key()))).as(where + ": GetItem key " + keyOf(get.key())).isNotEmpty();
      } else if (request instanceof TransactGetItemsRequest snapshot) {
        snapshot.transactItems().forEach(i -> assertThat(shapesOf.apply(keyOf(i.get().key())))
            .as(where + ": TransactGetItems key " + keyOf(i.get().key())).isNotEmpty());
      } else if (request instanceof TransactWriteItemsRequest transaction) {
        for (TransactWriteItem item : transaction.transactItems()) {
          List<String> key = keyOf(item);
          Operation kind = kindOf(item);
          assertThat(shapesOf.apply(key)).as(where + ": transaction key " + key + " written as " + kind)
              .anySatisfy(k -> assertThat(k.writes()).contains(kind));
        }
      }
    }
  }

  /** A route on write shards: one Query per shard, at most, each on its own shard's partition, never a Scan. */
  private static void assertFansOut(Route route, List<SdkRequest> recorded, String where) {
    int shards = route.fanOut().orElseThrow().shardCount();
    assertThat(recorded).as(where + ": operations").isNotEmpty().hasSizeLessThanOrEqualTo(shards)
        .allSatisfy(r -> assertThat(r).isInstanceOf(QueryRequest.class));
    Set<String> partitions = new HashSet<>();
    for (SdkRequest request : recorded) {
      QueryRequest query = (QueryRequest) request;
      assertThat(query.indexName()).as(where + ": index").isEqualTo(route.index().orElse(null));
      assertThat(query.keyConditionExpression()).as(where + ": key condition").startsWith("#pk = :pk");
      String pk = query.expressionAttributeValues().get(":pk").s();
      assertThat(pk).as(where + ": partition").matches(route.partitionKey().pattern(Map.of()));
      int shard = Integer.parseInt(pk.substring(route.partitionKey().prefix().length()));
      assertThat(shard).as(where + ": shard").isBetween(0, shards - 1);
      assertThat(partitions.add(pk)).as(where + ": one Query per shard, " + pk + " twice").isTrue();
      if (query.keyConditionExpression().contains("BETWEEN")) {
        assertThat(route.sortKeyConditions()).contains(SortKeyCondition.SORT_KEY_CONDITION_BETWEEN);
        assertThat(query.expressionAttributeNames().get("#pk")).as(where + ": partition attribute")
            .isEqualTo(route.index().isPresent() ? SingleTable.GSI1_PK : SingleTable.PK);
        assertThat(query.expressionAttributeValues().get(":from").s()).as(where + ": sort-key lower bound")
            .startsWith(route.sortKey().prefix());
        assertThat(query.expressionAttributeValues().get(":to").s()).as(where + ": sort-key upper bound")
            .startsWith(route.sortKey().prefix());
      } else {
        assertThat(query.expressionAttributeValues().get(":prefix").s()).as(where + ": sort-key prefix")
            .startsWith(route.sortKey().prefix());
      }
    }
  }

  /** The key of a transaction's item, whatever it does to it. */
  private static List<String> keyOf(TransactWriteItem item) {
    return keyOf(item.put() != null ? item.put().item()
        : item.update() != null ? item.update().key()
        : item.delete() != null ? item.delete().key() : item.conditionCheck().key());
  }

  /** What a transaction's item does: Put, Update, Delete or ConditionCheck. */
  private static Operation kindOf(TransactWriteItem item) {
    return item.put() != null ? Operation.OPERATION_PUT_ITEM
        : item.update() != null ? Operation.OPERATION_UPDATE_ITEM
        : item.delete() != null ? Operation.OPERATION_DELETE_ITEM : Operation.OPERATION_CONDITION_CHECK_ITEM;
  }

  private static boolean renders(Route.ItemKey key, Map<String, String> values) {
    return values.keySet().containsAll(key.partitionKey().variables()) && values.keySet().containsAll(key.sortKey().variables());
  }

  /** Asserts that every item written by {@code recorded} has a partition key under one of {@code ownedPrefixes}. */
  public static void assertWritesOnlyUnder(List<SdkRequest> recorded, Set<String> ownedPrefixes) {
    List<String> written = new java.util.ArrayList<>();
    for (SdkRequest request : recorded) {
      if (request instanceof PutItemRequest put) {
        written.add(put.item().get(SingleTable.PK).s());
      } else if (request instanceof UpdateItemRequest update) {
        written.add(update.key().get(SingleTable.PK).s());
      } else if (request instanceof software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest delete) {
        written.add(delete.key().get(SingleTable.PK).s());
      } else if (request instanceof TransactWriteItemsRequest transaction) {
        for (TransactWriteItem item : transaction.transactItems()) {
          if (item.put() != null) {
            written.add(item.put().item().get(SingleTable.PK).s());
          } else if (item.update() != null) {
            written.add(item.update().key().get(SingleTable.PK).s());
          } else if (item.delete() != null) {
            written.add(item.delete().key().get(SingleTable.PK).s());
          }
        }
      } else if (request instanceof software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest) {
        throw new AssertionError("unexpected BatchWriteItem: extend this check before using it");
      }
    }
    assertThat(written).as("partition keys written").isNotEmpty()
        .allSatisfy(pk -> assertThat(ownedPrefixes).anySatisfy(prefix -> assertThat(pk).startsWith(prefix)));
  }

  private static List<String> mainKey(Route route, Map<String, String> values) {
    return List.of(route.partitionKey().render(values), route.sortKey().render(values));
  }

  private static List<String> keyOf(Map<String, AttributeValue> item) {
    return List.of(item.get(SingleTable.PK).s(), item.get(SingleTable.SK).s());
  }

  /** String fields of the messages and of their nested messages, by field name (first one wins). */
  private static Map<String, String> fieldValues(Message... messages) {
    Map<String, String> values = new HashMap<>();
    for (Message message : messages) {
      collect(message, values);
    }
    return values;
  }

  /** The string fields of each element of the messages' repeated message fields (an order's lines). */
  private static List<Map<String, String>> repeatedValues(Message... messages) {
    List<Map<String, String>> elements = new java.util.ArrayList<>();
    for (Message message : messages) {
      for (Map.Entry<FieldDescriptor, Object> field : message.getAllFields().entrySet()) {
        if (field.getKey().isRepeated() && field.getKey().getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
          for (Object element : (List<?>) field.getValue()) {
            Map<String, String> values = new HashMap<>();
            collect((Message) element, values);
            elements.add(values);
          }
        }
      }
    }
    return elements;
  }

  private static void collect(Message message, Map<String, String> values) {
    for (Map.Entry<FieldDescriptor, Object> field : message.getAllFields().entrySet()) {
      if (field.getKey().isRepeated()) {
        continue;
      }
      if (field.getValue() instanceof String s && !s.isEmpty()) {
        values.putIfAbsent(field.getKey().getName(), s);
      } else if (field.getValue() instanceof Message nested) {
        collect(nested, values);
      }
    }
  }
}
