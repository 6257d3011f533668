package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.error.InvalidArgumentException;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.paging.PageTokenCodec;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;

/**
 * Runs one page of a Query with sealed page tokens.
 *
 * <p>It asks for one item more than the page holds: when that extra item comes back there is a next
 * page, and the token points after the last item returned; when it does not, the list is complete and
 * the token is empty, so callers never fetch a trailing empty page.
 *
 * @param keyAttributes the attributes that form the continuation key: the table keys, and for an index
 *                      the index keys too
 */
public record PagedQuery(DynamoDbAsyncClient dynamo, PageTokenCodec tokens, List<String> keyAttributes) {

  /**
   * Reads one page.
   *
   * @param query      the query without Limit and ExclusiveStartKey
   * @param scope      what the token is valid for (route and partition, plus filters)
   * @param partition  the key attribute and value every continuation key must carry
   */
  public <T> CompletableFuture<Page<T>> page(QueryRequest query, int pageSize, String pageToken, String scope,
      Map.Entry<String, String> partition, Function<Map<String, AttributeValue>, T> mapper) {
    QueryRequest.Builder request = query.toBuilder().limit(pageSize + 1);
    if (!pageToken.isEmpty()) {
      request.exclusiveStartKey(startKey(scope, pageToken, partition));
    }
    return dynamo.query(request.build())
        .handle((response, failure) -> {
          if (failure != null) {
            throw DynamoErrors.translate(failure);
          }
          List<Map<String, AttributeValue>> items = response.items();
          if (items.size() > pageSize) {
            List<Map<String, AttributeValue>> page = items.subList(0, pageSize);
            return new Page<>(page.stream().map(mapper).toList(), token(scope, page.get(pageSize - 1)));
          }
          String next = response.hasLastEvaluatedKey() && !response.lastEvaluatedKey().isEmpty()
              ? token(scope, response.lastEvaluatedKey()) : "";
          return new Page<>(items.stream().map(mapper).toList(), next);
        });
  }

  private Map<String, AttributeValue> startKey(String scope, String pageToken, Map.Entry<String, String> partition) {
    Map<String, String> key = tokens.decode(scope, pageToken);
    if (!key.keySet().equals(Set.copyOf(keyAttributes)) || !partition.getValue().equals(key.get(partition.getKey()))) {
      // Unreachable without our key: tokens are sealed per scope. Checked anyway, never trusted.
      throw InvalidArgumentException.of("page_token", "is not a page token issued for this request");
    }
    Map<String, AttributeValue> start = new HashMap<>();
    key.forEach((name, value) -> start.put(name, AttributeValue.fromS(value)));
    return start;
  }

  private String token(String scope, Map<String, AttributeValue> item) {
    Map<String, String> key = new LinkedHashMap<>();
    for (String name : keyAttributes) {
      key.put(name, item.get(name).s());
    }
    return tokens.encode(scope, key);
  }
}
