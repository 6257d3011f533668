package dev.warehouse.bench.target;

import dev.warehouse.bench.load.Call;

/**
 * Where the load goes: the gateway, a service directly, or DynamoDB directly. Each gives the calls of
 * the access patterns the benchmark measures, on the data set's keys.
 */
public interface Target {

  /** The operations: the six reads of the retrieval map, and the two order writes. */
  enum Op { A1, A2, A3, A4, A5, A6, PLACE_ORDER, UPDATE_STATUS }

  String name();

  /** The call of {@code op}; {@code key} picks a key index for the n-th request. */
  Call call(Op op, java.util.function.LongToIntFunction key);
}
