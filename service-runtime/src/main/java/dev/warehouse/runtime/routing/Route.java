package dev.warehouse.runtime.routing;

import dev.warehouse.routing.v1.Consistency;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.routing.v1.SortKeyCondition;
import java.util.List;
import java.util.Optional;

/**
 * One row of the retrieval map, as read from the {@code (warehouse.routing.v1.route)} option of an RPC.
 *
 * @param fullMethodName the RPC, e.g. {@code warehouse.inventory.v1.InventoryService/GetSerialItem}
 * @param index          the secondary index read, empty for the base table
 * @param alsoWrites     further items the call writes in the same transaction
 * @param writes         how the transaction writes the main item (Put, Update, Delete or ConditionCheck);
 *                       empty for a route without TransactWriteItems
 * @param fanOut         the write shards of its partition key, when it has them
 * @param ownerFields    fields of the stored item naming whom it belongs to, when the partition key does not:
 *                       a caller's scope on one is checked by the owning service against the item it reads
 * @param alsoReads      further items the call reads by full key besides those it writes (stock buckets)
 * @param splitOperations operations issued besides {@code operations} only for stock split over buckets
 */
public record Route(
    String fullMethodName,
    String patternId,
    String request,
    List<Operation> operations,
    Optional<String> index,
    KeyTemplate partitionKey,
    KeyTemplate sortKey,
    List<SortKeyCondition> sortKeyConditions,
    Consistency consistency,
    String expectedVolume,
    List<ItemKey> alsoWrites,
    List<Operation> writes,
    Optional<FanOut> fanOut,
    List<String> ownerFields,
    List<ItemKey> alsoReads,
    List<Operation> splitOperations) {

  /** A key of an item the route writes besides its main one, and how its transaction writes it. */
  public record ItemKey(KeyTemplate partitionKey, KeyTemplate sortKey, List<Operation> writes) {

    public ItemKey {
      writes = List.copyOf(writes);
    }
  }

  /**
   * Write shards: the partition key's {@code {shard}} runs over {@code shardCount} values, and an
   * item's shard is the CRC-32 of {@code shardOf} rendered, modulo the count.
   */
  public record FanOut(int shardCount, KeyTemplate shardOf) {

    /** The most shards a route may have: {@link #shardValue} has two digits. */
    public static final int MAX_SHARDS = 100;

    public FanOut {
      if (shardCount < 1 || shardCount > MAX_SHARDS) {
        throw new IllegalArgumentException("shard count must be 1 to " + MAX_SHARDS + ", got " + shardCount);
      }
    }

    /** The same shard key over another number of shards. */
    public FanOut withShardCount(int count) {
      return new FanOut(count, shardOf);
    }

    /** The shard of the item whose fields render {@code shardOf} as {@code values}, in the template's order. */
    public int shardOf(String... values) {
      java.util.zip.CRC32 crc = new java.util.zip.CRC32();
      crc.update(shardOf.render(values).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return (int) (crc.getValue() % shardCount);
    }

    /** The {@code {shard}} value of shard {@code index}: two digits. */
    public static String shardValue(int index) {
      return String.format(java.util.Locale.ROOT, "%02d", index);
    }
  }

  public Route {
    operations = List.copyOf(operations);
    sortKeyConditions = List.copyOf(sortKeyConditions);
    alsoWrites = List.copyOf(alsoWrites);
    writes = List.copyOf(writes);
    ownerFields = List.copyOf(ownerFields);
    alsoReads = List.copyOf(alsoReads);
    splitOperations = List.copyOf(splitOperations);
  }

  /** Without owner fields: a route whose partition key names its owner, or that has none. */
  public Route(String fullMethodName, String patternId, String request, List<Operation> operations, Optional<String> index,
      KeyTemplate partitionKey, KeyTemplate sortKey, List<SortKeyCondition> sortKeyConditions, Consistency consistency,
      String expectedVolume, List<ItemKey> alsoWrites, List<Operation> writes, Optional<FanOut> fanOut) {
    this(fullMethodName, patternId, request, operations, index, partitionKey, sortKey, sortKeyConditions, consistency,
        expectedVolume, alsoWrites, writes, fanOut, List.of(), List.of(), List.of());
  }

  /** The main item's key with how the transaction writes it, shaped like the keys of {@link #alsoWrites}. */
  public ItemKey mainKey() {
    return new ItemKey(partitionKey, sortKey, writes);
  }

  /** Whether one call of this route sends a TransactWriteItems. */
  public boolean transacts() {
    return operations.contains(Operation.OPERATION_TRANSACT_WRITE_ITEMS);
  }

  /** The method's simple name, e.g. {@code GetSerialItem}. */
  public String methodName() {
    return fullMethodName.substring(fullMethodName.indexOf('/') + 1);
  }

  /** Whether a caller may ask this route for a strongly consistent read. */
  public boolean allowsStrongReads() {
    return consistency == Consistency.CONSISTENCY_STRONG_ALLOWED;
  }
}
