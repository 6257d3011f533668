package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.dynamo.DynamoStore.ShardKeys;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

/**
 * One page of a route on write shards: where each shard's Query starts, how the shards' answers merge
 * into the page (the smallest sort keys of all shards, in order), and the state the next page starts
 * from (the last sort key returned, with its table keys on an index, and the shards that are done).
 * The answers are built as DynamoDB gives them: at most the Limit asked for (the page size plus one),
 * with a LastEvaluatedKey whenever the Limit was reached.
 */
class ShardedPageTest {

  private static final String NAME = "name";

  @Test
  void firstPage_asksEveryShard_fromItsBeginning() {
    ShardedPage first = ShardedPage.first(ShardKeys.TABLE, 4);

    for (int shard = 0; shard < 4; shard++) {
      assertThat(first.done(shard)).isFalse();
      assertThat(first.startKey(shardQuery(shard))).isEmpty();
    }
  }

  @Test
  void merge_takesTheSmallestSortKeysOfAllShards_inOrder_upToThePageSize() {
    ShardedPage first = ShardedPage.first(ShardKeys.TABLE, 3);
    List<QueryResponse> answers = List.of(
        cut(item(0, "B"), item(0, "E"), item(0, "F")),
        whole(item(1, "A"), item(1, "D")),
        whole(item(2, "C")));

    ShardedPage.Merged<String> merged = first.merge(answers, 2, ShardedPageTest::name);

    assertThat(merged.items()).containsExactly("A", "B");
    assertThat(merged.next()).hasValueSatisfying(state -> {
      assertThat(state).containsEntry("after", "B");
      // Shard 1 still has D, shard 2 its C: nobody is done, though shard 2 answered all it has.
      assertThat(state).containsEntry("done", ShardedPage.shardMask(new BitSet(), 3));
    });
  }

  @Test
  void shardWhoseEveryItemWasTaken_andThatReachedNoLimit_isDone() {
    ShardedPage first = ShardedPage.first(ShardKeys.TABLE, 3);
    List<QueryResponse> answers = List.of(
        cut(item(0, "C"), item(0, "E"), item(0, "F")),
        whole(item(1, "A")),
        whole());

    ShardedPage.Merged<String> merged = first.merge(answers, 2, ShardedPageTest::name);

    assertThat(merged.items()).containsExactly("A", "C");
    ShardedPage next = resume(ShardKeys.TABLE, 3, merged.next().orElseThrow());
    assertThat(next.done(0)).as("has E and F").isFalse();
    assertThat(next.done(1)).as("answered A only, and A was taken").isTrue();
    assertThat(next.done(2)).as("empty").isTrue();
  }

  @Test
  void shardThatAnsweredALastEvaluatedKey_isNotDone_thoughNothingItReturnedIsLeft() {
    // A filtered Query may stop at its Limit with no item to show for it: the shard still has more.
    ShardedPage first = ShardedPage.first(ShardKeys.TABLE, 2);
    List<QueryResponse> answers = List.of(
        whole(item(0, "A")),
        QueryResponse.builder().items(List.of()).lastEvaluatedKey(Map.of(
            SingleTable.PK, AttributeValue.fromS(pk(1)), SingleTable.SK, AttributeValue.fromS("Z"))).build());

    ShardedPage.Merged<String> merged = first.merge(answers, 5, ShardedPageTest::name);

    assertThat(merged.items()).containsExactly("A");
    ShardedPage next = resume(ShardKeys.TABLE, 2, merged.next().orElseThrow());
    assertThat(next.done(0)).isTrue();
    assertThat(next.done(1)).isFalse();
  }

  @Test
  void resumedPage_startsEveryShardAfterTheLastSortKey_onItsOwnPartition() {
    ShardedPage first = ShardedPage.first(ShardKeys.TABLE, 3);
    ShardedPage.Merged<String> merged = first.merge(List.of(
        cut(item(0, "A"), item(0, "C")),
        whole(item(1, "B")),
        whole(item(2, "D"))), 1, ShardedPageTest::name);

    ShardedPage next = resume(ShardKeys.TABLE, 3, merged.next().orElseThrow());

    for (int shard = 0; shard < 3; shard++) {
      assertThat(next.startKey(shardQuery(shard))).contains(Map.of(
          SingleTable.PK, AttributeValue.fromS(pk(shard)), SingleTable.SK, AttributeValue.fromS("A")));
    }
  }

  @Test
  void resumedPageOnAnIndex_startsEachShardWithTheLastItemsTableKeys_whichDynamoDbNeeds() {
    ShardedPage first = ShardedPage.first(ShardKeys.GSI1, 2);
    ShardedPage.Merged<String> merged = first.merge(List.of(
        cut(indexItem(0, "HOLD#1", "R#a"), indexItem(0, "HOLD#3", "R#c")),
        whole(indexItem(1, "HOLD#2", "R#b"))), 1, ShardedPageTest::name);

    ShardedPage next = resume(ShardKeys.GSI1, 2, merged.next().orElseThrow());

    assertThat(next.startKey(shardQuery(1))).contains(Map.of(
        SingleTable.GSI1_PK, AttributeValue.fromS(pk(1)),
        SingleTable.GSI1_SK, AttributeValue.fromS("HOLD#1"),
        SingleTable.PK, AttributeValue.fromS("R#a"),
        SingleTable.SK, AttributeValue.fromS("METADATA")));
  }

  @Test
  void shardsDoneOnAnEarlierPage_areNotAsked_andStayDone() {
    ShardedPage first = ShardedPage.first(ShardKeys.TABLE, 3);
    ShardedPage second = resume(ShardKeys.TABLE, 3, first.merge(List.of(
        whole(item(0, "A")),
        cut(item(1, "B"), item(1, "C")),
        cut(item(2, "D"), item(2, "E"))), 1, ShardedPageTest::name).next().orElseThrow());
    assertThat(second.done(0)).isTrue();

    // Shard 0 is not asked: its answer is null.
    List<QueryResponse> answers = new ArrayList<>();
    answers.add(null);
    answers.add(whole(item(1, "B"), item(1, "C")));
    answers.add(cut(item(2, "D"), item(2, "E")));
    ShardedPage.Merged<String> merged = second.merge(answers, 1, ShardedPageTest::name);

    assertThat(merged.items()).containsExactly("B");
    ShardedPage third = resume(ShardKeys.TABLE, 3, merged.next().orElseThrow());
    assertThat(third.done(0)).isTrue();
    assertThat(third.done(1)).isFalse();
  }

  @Test
  void everyShardFinished_endsTheList_evenWhenThePageIsExactlyFull() {
    ShardedPage first = ShardedPage.first(ShardKeys.TABLE, 2);

    ShardedPage.Merged<String> merged = first.merge(List.of(
        whole(item(0, "A")),
        whole(item(1, "B"))), 2, ShardedPageTest::name);

    // No token, so the caller does not fetch a trailing empty page.
    assertThat(merged.items()).containsExactly("A", "B");
    assertThat(merged.next()).isEmpty();
  }

  @Test
  void everyShardEmpty_givesAnEmptyPage_andNoToken() {
    ShardedPage.Merged<String> merged = ShardedPage.first(ShardKeys.TABLE, 3)
        .merge(List.of(whole(), whole(), whole()), 10, ShardedPageTest::name);

    assertThat(merged.items()).isEmpty();
    assertThat(merged.next()).isEmpty();
  }

  @Test
  void oneShard_pagesLikeAPlainQuery() {
    ShardedPage first = ShardedPage.first(ShardKeys.TABLE, 1);

    ShardedPage.Merged<String> page = first.merge(List.of(
        cut(item(0, "A"), item(0, "B"), item(0, "C"))), 2, ShardedPageTest::name);

    assertThat(page.items()).containsExactly("A", "B");
    assertThat(page.next()).contains(Map.of("after", "B", "done", "0"));
  }

  @ParameterizedTest(name = "{0} shards")
  @ValueSource(ints = {1, 4, 16, 100})
  void nextPagesState_holdsOneSortKey_whateverTheShardCount(int shards) {
    List<QueryResponse> answers = IntStream.range(0, shards)
        .mapToObj(shard -> cut(item(shard, "K" + (1000 + shard)), item(shard, "K" + (2000 + shard))))
        .toList();

    Map<String, String> state = ShardedPage.first(ShardKeys.TABLE, shards)
        .merge(answers, 1, ShardedPageTest::name).next().orElseThrow();

    assertThat(state.keySet()).containsExactlyInAnyOrder("after", "done");
    assertThat(state.get("done")).hasSize((shards + 3) / 4);
  }

  @Test
  void resume_refusesStatesThatAreNotOfAPageOfTheseShards() {
    String mask = ShardedPage.shardMask(new BitSet(), 4);
    assertThat(ShardedPage.resume(ShardKeys.TABLE, 4, Map.of("after", "K1", "done", mask))).isPresent();

    assertThat(ShardedPage.resume(ShardKeys.TABLE, 4, Map.of("done", mask))).as("no sort key").isEmpty();
    assertThat(ShardedPage.resume(ShardKeys.TABLE, 4, Map.of("after", "", "done", mask))).as("empty sort key").isEmpty();
    assertThat(ShardedPage.resume(ShardKeys.TABLE, 4, Map.of("after", "K1"))).as("no mask").isEmpty();
    assertThat(ShardedPage.resume(ShardKeys.TABLE, 8, Map.of("after", "K1", "done", mask))).as("another shard count")
        .isEmpty();
    assertThat(ShardedPage.resume(ShardKeys.TABLE, 4, Map.of("after", "K1", "done", mask, "PK", "X")))
        .as("a field too many").isEmpty();
    assertThat(ShardedPage.resume(ShardKeys.GSI1, 4, Map.of("after", "K1", "done", mask))).as("no table keys").isEmpty();
    assertThat(ShardedPage.resume(ShardKeys.GSI1, 4, Map.of("after", "K1", "done", mask, "PK", "R#a", "SK", "")))
        .as("an empty table key").isEmpty();
    assertThat(ShardedPage.resume(ShardKeys.GSI1, 4, Map.of("after", "K1", "done", mask, "PK", "R#a", "SK", "METADATA")))
        .isPresent();
  }

  /** Pages through shards of random sizes (empty ones too) as DynamoDB answers each Query. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"TABLE", "GSI1"})
  void pagingThroughAnyShards_returnsEveryItemOnce_inSortKeyOrder_withNoEmptyPage(String on) {
    ShardKeys keys = on.equals("TABLE") ? ShardKeys.TABLE : ShardKeys.GSI1;
    Random random = new Random(7);
    for (int round = 0; round < 200; round++) {
      int shards = 1 + random.nextInt(random.nextBoolean() ? 3 : 20);
      int pageSize = 1 + random.nextInt(random.nextBoolean() ? 3 : 12);
      Shards table = new Shards(keys, shards);
      int total = random.nextInt(60);
      for (int i = 0; i < total; i++) {
        // A skewed spread leaves some shards empty and makes others long.
        int shard = random.nextInt(random.nextInt(shards) + 1);
        table.add(shard, String.format("K%05d#%d", random.nextInt(100_000), i));
      }

      List<List<String>> pages = new ArrayList<>();
      ShardedPage position = ShardedPage.first(keys, shards);
      while (true) {
        if (pages.size() > total) {
          throw new AssertionError("no end after " + pages.size() + " pages of " + total + " items in " + shards + " shards");
        }
        List<QueryResponse> answers = new ArrayList<>();
        for (int shard = 0; shard < shards; shard++) {
          answers.add(position.done(shard) ? null : table.query(shard, position.startKey(shardQuery(shard)), pageSize + 1));
        }
        ShardedPage.Merged<String> merged = position.merge(answers, pageSize, ShardedPageTest::name);
        pages.add(merged.items());
        if (merged.next().isEmpty()) {
          break;
        }
        position = resume(keys, shards, merged.next().get());
      }

      String what = total + " items in " + shards + " shards, pages of " + pageSize;
      assertThat(pages.stream().flatMap(List::stream).toList()).as(what).isEqualTo(table.sortedNames());
      assertThat(pages.subList(0, pages.size() - 1)).as(what).allSatisfy(page -> assertThat(page).hasSize(pageSize));
      if (total > 0) {
        assertThat(pages.get(pages.size() - 1)).as(what + ": the last page").isNotEmpty();
      }
    }
  }

  /** Shards as DynamoDB keeps them: each partition's items in sort-key order. */
  private static final class Shards {
    private final ShardKeys keys;
    private final List<List<Map<String, AttributeValue>>> items = new ArrayList<>();
    private final Set<String> keyNames;

    Shards(ShardKeys keys, int count) {
      this.keys = keys;
      this.keyNames = Set.copyOf(expectedKeys());
      for (int i = 0; i < count; i++) {
        items.add(new ArrayList<>());
      }
    }

    void add(int shard, String sortKey) {
      items.get(shard).add(keys == ShardKeys.TABLE ? item(shard, sortKey) : indexItem(shard, sortKey, "R#" + sortKey));
      items.get(shard).sort(Comparator.comparing(item -> item.get(keys.sort()).s()));
    }

    List<String> sortedNames() {
      return items.stream().flatMap(List::stream).map(ShardedPageTest::name).sorted().toList();
    }

    /** A Query of one shard: after the start key's sort key, at most {@code limit} items. */
    QueryResponse query(int shard, Optional<Map<String, AttributeValue>> start, int limit) {
      // DynamoDB refuses a start key of another partition, or without every key attribute of the table (and index).
      // Checked by hand: this runs for every shard of every page.
      start.ifPresent(key -> {
        if (!key.get(keys.partition()).equals(AttributeValue.fromS(pk(shard))) || !key.keySet().equals(keyNames)) {
          throw new AssertionError("start key of shard " + shard + ": " + key);
        }
      });
      String after = start.map(key -> key.get(keys.sort()).s()).orElse("");
      List<Map<String, AttributeValue>> page = items.get(shard).stream()
          .filter(item -> item.get(keys.sort()).s().compareTo(after) > 0)
          .limit(limit)
          .toList();
      QueryResponse.Builder answer = QueryResponse.builder().items(page);
      if (page.size() == limit) {
        Map<String, AttributeValue> last = page.get(page.size() - 1);
        Map<String, AttributeValue> key = new HashMap<>();
        expectedKeys().forEach(name -> key.put(name, last.get(name)));
        answer.lastEvaluatedKey(key);
      }
      return answer.build();
    }

    private List<String> expectedKeys() {
      List<String> names = new ArrayList<>(keys.tableKeys());
      names.add(keys.partition());
      names.add(keys.sort());
      return names;
    }
  }

  private static ShardedPage resume(ShardKeys keys, int shards, Map<String, String> state) {
    return ShardedPage.resume(keys, shards, state).orElseThrow(() -> new AssertionError("state refused: " + state));
  }

  private static String pk(int shard) {
    return "LOW#" + shard;
  }

  private static QueryRequest shardQuery(int shard) {
    return QueryRequest.builder().keyConditionExpression("#pk = :pk")
        .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS(pk(shard)))).build();
  }

  private static Map<String, AttributeValue> item(int shard, String sortKey) {
    return Map.of(SingleTable.PK, AttributeValue.fromS(pk(shard)), SingleTable.SK, AttributeValue.fromS(sortKey),
        NAME, AttributeValue.fromS(sortKey));
  }

  /** An item of a shard of GSI1, whose table key is {@code pk} / METADATA. */
  private static Map<String, AttributeValue> indexItem(int shard, String sortKey, String pk) {
    return Map.of(SingleTable.GSI1_PK, AttributeValue.fromS(pk(shard)), SingleTable.GSI1_SK, AttributeValue.fromS(sortKey),
        SingleTable.PK, AttributeValue.fromS(pk), SingleTable.SK, AttributeValue.fromS("METADATA"),
        NAME, AttributeValue.fromS(sortKey));
  }

  private static String name(Map<String, AttributeValue> item) {
    return item.get(NAME).s();
  }

  /** An answer with every item the shard has after its start: no LastEvaluatedKey. */
  @SafeVarargs
  private static QueryResponse whole(Map<String, AttributeValue>... items) {
    return QueryResponse.builder().items(List.of(items)).build();
  }

  /** An answer cut at its Limit: DynamoDB then returns the last item's key as the LastEvaluatedKey. */
  @SafeVarargs
  private static QueryResponse cut(Map<String, AttributeValue>... items) {
    Map<String, AttributeValue> key = new HashMap<>(items[items.length - 1]);
    key.remove(NAME);
    return QueryResponse.builder().items(List.of(items)).lastEvaluatedKey(key).build();
  }
}
