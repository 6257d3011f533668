package dev.warehouse.bench.target;

import dev.warehouse.bench.load.Call;

/**
 * Where the load goes: the gateway, a service directly, or DynamoDB directly. Each gives the calls of
 * the access patterns the benchmark measures, on the data set's keys.
 */
public interface Target {

  /**
   * The operations: the reads of the retrieval map, the two order writes, and the inventory's writes
   * (W1 PutSerialItem, W2 PutProductInventory, W3 AdjustStock). A7 and the inventory's writes are
   * measured through the services only.
   */
  enum Op { A1, A2, A3, A4, A5, A6, A7, PLACE_ORDER, UPDATE_STATUS, PUT_SERIAL, PUT_STOCK, ADJUST_STOCK }

  String name();

  /** The call of {@code op}; {@code key} picks a key index for the n-th request. */
  Call call(Op op, java.util.function.LongToIntFunction key);
}
