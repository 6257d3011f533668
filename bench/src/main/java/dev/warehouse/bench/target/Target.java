package dev.warehouse.bench.target;

import dev.warehouse.bench.load.Call;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.order.store.OrderKeys;
import dev.warehouse.runtime.routing.Route;

/**
 * Where the load goes: the gateway, a service directly, or DynamoDB directly. Each gives the calls of
 * the access patterns the benchmark measures, on the data set's keys.
 */
public interface Target {

  /**
   * The operations: the reads of the retrieval map, the two order writes, and the inventory's writes
   * (PutSerialItem, PutProductInventory, AdjustStock), each the RPC of a route the services declare:
   * its pattern id and method name come from that route, never typed here. Declared in the order the
   * capacity scenario calls them: ListLowStock after PutProductInventory, whose stock takes put
   * low-stock markers for it to read. ListLowStock and the inventory's writes are measured through
   * the services only.
   */
  enum Op {
    GET_SERIAL_ITEM(InventoryKeys.SERIAL_ITEM),
    GET_PRODUCT_INVENTORY(InventoryKeys.PRODUCT_AT_WAREHOUSE),
    LIST_PRODUCT_WAREHOUSES(InventoryKeys.WAREHOUSES_OF_PRODUCT),
    LIST_WAREHOUSE_PRODUCTS(InventoryKeys.PRODUCTS_IN_WAREHOUSE),
    LIST_CUSTOMER_ORDERS(OrderKeys.ORDERS_OF_CUSTOMER),
    GET_ORDER(OrderKeys.ORDER_BY_ID),
    PUT_SERIAL_ITEM(InventoryKeys.PUT_SERIAL_ITEM),
    PUT_PRODUCT_INVENTORY(InventoryKeys.PUT_INVENTORY),
    LIST_LOW_STOCK(InventoryKeys.LOW_STOCK),
    ADJUST_STOCK(InventoryKeys.ADJUST_STOCK),
    PLACE_ORDER(OrderKeys.PLACE_ORDER),
    UPDATE_ORDER_STATUS(OrderKeys.UPDATE_STATUS);

    private final Route route;

    Op(Route route) {
      this.route = route;
    }

    /** The route's access-pattern id, e.g. {@code A1}. */
    public String patternId() {
      return route.patternId();
    }

    /** The RPC's simple name, e.g. {@code GetSerialItem}. */
    public String method() {
      return route.methodName();
    }

    /** Reports name an operation by its pattern id, as the retrieval map does. */
    @Override
    public String toString() {
      return patternId();
    }

    /**
     * The DynamoDB calls one call of the operation makes when it succeeds: PlaceOrder makes six (the
     * order PENDING, the hold's read of its reservation and of the stock, the hold, the confirm, the order
     * PLACED), UpdateOrderStatus two (a read, a transaction), the others one. Side-by-side scenarios offer
     * each operation at their rate divided by this, so every operation's turn asks the same of the store.
     */
    public int dynamoCalls() {
      return switch (this) {
        case PLACE_ORDER -> 6;
        case UPDATE_ORDER_STATUS -> 2;
        default -> 1;
      };
    }
  }

  String name();

  /** The call of {@code op}; {@code key} picks a key index for the n-th request. */
  Call call(Op op, java.util.function.LongToIntFunction key);
}
