package dev.warehouse.bench.target;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.target.Target.Op;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.order.store.OrderKeys;
import dev.warehouse.runtime.routing.Route;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bench's operations are routes the services declare: their ids and methods come from there. */
class OpTest {

  @Test
  void eachOp_isTheRouteOfItsMethod_inTheServicesRouteTables() {
    List<Route> declared = java.util.stream.Stream.of(InventoryKeys.ROUTES, OrderKeys.ROUTES)
        .flatMap(t -> t.routes().stream()).toList();
    for (Op op : Op.values()) {
      assertThat(declared).as(op.name()).anySatisfy(r -> {
        assertThat(r.methodName()).isEqualTo(op.method());
        assertThat(r.patternId()).isEqualTo(op.patternId());
      });
      assertThat(op).hasToString(op.patternId());
    }
    assertThat(Arrays.stream(Op.values()).map(Op::patternId).distinct()).hasSize(Op.values().length);
  }

  @Test
  void listLowStock_isCalledAfterPutProductInventory_whoseStockTakesPutTheMarkersItReads() {
    assertThat(Op.LIST_LOW_STOCK.ordinal()).isGreaterThan(Op.PUT_PRODUCT_INVENTORY.ordinal());
    assertThat(Op.GET_SERIAL_ITEM.patternId()).isEqualTo("A1");
    assertThat(Op.PLACE_ORDER.method()).isEqualTo("PlaceOrder");
  }
}
