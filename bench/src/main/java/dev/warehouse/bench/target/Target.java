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
  enum Op {
    A1, A2, A3, A4, A5, A6, A7, PLACE_ORDER, UPDATE_STATUS, PUT_SERIAL, PUT_STOCK, ADJUST_STOCK;

    /**
     * The DynamoDB calls one call of the operation makes when it succeeds: PlaceOrder makes six (the
     * order PENDING, the hold's read of its reservation and of the stock, the hold, the confirm, the order
     * PLACED), UpdateOrderStatus two (a read, a transaction), the others one. Side-by-side scenarios offer
     * each operation at their rate divided by this, so every operation's turn asks the same of the store.
     */
    public int dynamoCalls() {
      return switch (this) {
        case PLACE_ORDER -> 6;
        case UPDATE_STATUS -> 2;
        default -> 1;
      };
    }
  }

  String name();

  /** The call of {@code op}; {@code key} picks a key index for the n-th request. */
  Call call(Op op, java.util.function.LongToIntFunction key);
}
