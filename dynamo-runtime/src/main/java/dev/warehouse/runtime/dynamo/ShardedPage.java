package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.paging.Page;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

/**
 * Where one page of a route on write shards starts, and how the shards' answers merge into it: the
 * page holds the smallest items after the previous page's last, whichever shards they are in (sort
 * keys are unique across shards), so every shard resumes after that one sort key, and the token's state
 * is that key (with the item's table keys, on an index) and which shards are done: the same size
 * whatever the shard count. {@link DynamoStore#queryShards} sends the queries and seals the state.
 */
final class ShardedPage {

  /** The token state's fields: the last sort key returned, and the shards that are done. */
  private static final String AFTER = "after";
  private static final String SHARDS_DONE = "done";

  private final DynamoStore.ShardKeys keys;
  private final int shards;
  /** The last sort key returned so far; empty on the first page. */
  private final String after;
  private final Map<String, String> afterItem;
  private final BitSet done;

  private ShardedPage(DynamoStore.ShardKeys keys, int shards, String after, Map<String, String> afterItem, BitSet done) {
    this.keys = keys;
    this.shards = shards;
    this.after = after;
    this.afterItem = afterItem;
    this.done = done;
  }

  /** The first page of {@code shards} shards. */
  static ShardedPage first(DynamoStore.ShardKeys keys, int shards) {
    return new ShardedPage(keys, shards, "", Map.of(), new BitSet(shards));
  }

  /** The page a token's {@code state} names; empty when it is not the state of a page of these shards. */
  static Optional<ShardedPage> resume(DynamoStore.ShardKeys keys, int shards, Map<String, String> state) {
    Optional<BitSet> mask = shardMask(state.get(SHARDS_DONE), shards);
    if (state.size() != 2 + keys.tableKeys().size() || state.get(AFTER) == null || state.get(AFTER).isEmpty()
        || mask.isEmpty() || !keys.tableKeys().stream().allMatch(k -> state.get(k) != null && !state.get(k).isEmpty())) {
      return Optional.empty();
    }
    Map<String, String> tableKeys = new HashMap<>();
    keys.tableKeys().forEach(k -> tableKeys.put(k, state.get(k)));
    return Optional.of(new ShardedPage(keys, shards, state.get(AFTER), tableKeys, mask.get()));
  }

  /** Whether {@code shard} has nothing more: its query is not sent. */
  boolean done(int shard) {
    return done.get(shard);
  }

  /**
   * Where the query of one shard starts: after the same sort key as every shard, on its own partition
   * (its {@code :pk}), with the last item's table keys; empty on the first page.
   */
  Optional<Map<String, AttributeValue>> startKey(QueryRequest shardQuery) {
    if (after.isEmpty()) {
      return Optional.empty();
    }
    Map<String, AttributeValue> start = new HashMap<>();
    start.put(keys.partition(), shardQuery.expressionAttributeValues().get(":pk"));
    start.put(keys.sort(), AttributeValue.fromS(after));
    afterItem.forEach((name, value) -> start.put(name, AttributeValue.fromS(value)));
    return Optional.of(start);
  }

  /** A merged page: its items, and the state the next page starts from (empty when every shard is done). */
  record Merged<T>(List<T> items, Optional<Map<String, String>> next) {}

  /**
   * Takes the page's items from the shards' answers (null for a shard that was done) in sort-key order,
   * and where the next page starts. Each shard was asked for one item more than the page holds, so the
   * merge knows whether a shard has more.
   */
  <T> Merged<T> merge(List<QueryResponse> answers, int pageSize, Function<Map<String, AttributeValue>, T> mapper) {
    int[] taken = new int[answers.size()];
    PriorityQueue<Integer> heads = new PriorityQueue<>(
        Comparator.comparing((Integer shard) -> answers.get(shard).items().get(taken[shard]).get(keys.sort()).s()));
    for (int shard = 0; shard < answers.size(); shard++) {
      if (answers.get(shard) != null && !answers.get(shard).items().isEmpty()) {
        heads.add(shard);
      }
    }
    List<T> page = new ArrayList<>(pageSize);
    String last = after;
    Map<String, String> lastItem = afterItem;
    while (page.size() < pageSize && !heads.isEmpty()) {
      int shard = heads.poll();
      Map<String, AttributeValue> item = answers.get(shard).items().get(taken[shard]);
      page.add(mapper.apply(item));
      last = item.get(keys.sort()).s();
      Map<String, String> tableKeys = new HashMap<>();
      keys.tableKeys().forEach(k -> tableKeys.put(k, item.get(k).s()));
      lastItem = tableKeys;
      taken[shard]++;
      if (taken[shard] < answers.get(shard).items().size()) {
        heads.add(shard);
      }
    }
    BitSet doneAfter = new BitSet(answers.size());
    for (int shard = 0; shard < answers.size(); shard++) {
      QueryResponse answer = answers.get(shard);
      doneAfter.set(shard, answer == null
          || taken[shard] == answer.items().size() && !(answer.hasLastEvaluatedKey() && !answer.lastEvaluatedKey().isEmpty()));
    }
    if (doneAfter.cardinality() == answers.size()) {
      return new Merged<>(page, Optional.empty());
    }
    Map<String, String> state = new HashMap<>(lastItem);
    state.put(AFTER, last);
    state.put(SHARDS_DONE, shardMask(doneAfter, shards));
    return new Merged<>(page, Optional.of(state));
  }

  /** Shards that are done, as hex digits (shard 0 the lowest bit of the first), so a token stays small. */
  static String shardMask(BitSet done, int shards) {
    StringBuilder hex = new StringBuilder();
    for (int from = 0; from < shards; from += 4) {
      int digit = 0;
      for (int bit = 0; bit < 4 && from + bit < shards; bit++) {
        digit |= done.get(from + bit) ? 1 << bit : 0;
      }
      hex.append(Character.forDigit(digit, 16));
    }
    return hex.toString();
  }

  /** The shards a mask of {@code shards} names; empty when it is not such a mask. */
  static Optional<BitSet> shardMask(String hex, int shards) {
    if (hex == null || hex.length() != (shards + 3) / 4) {
      return Optional.empty();
    }
    BitSet done = new BitSet(shards);
    for (int i = 0; i < hex.length(); i++) {
      int digit = Character.digit(hex.charAt(i), 16);
      if (digit < 0 || Character.isUpperCase(hex.charAt(i))) {
        return Optional.empty();
      }
      for (int bit = 0; bit < 4; bit++) {
        if ((digit & (1 << bit)) != 0) {
          if (i * 4 + bit >= shards) {
            return Optional.empty();
          }
          done.set(i * 4 + bit);
        }
      }
    }
    return Optional.of(done);
  }
}
