package dev.warehouse.runtime.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.routing.v1.Consistency;
import dev.warehouse.routing.v1.Operation;
import io.grpc.health.v1.HealthProto;
import java.util.List;
import org.junit.jupiter.api.Test;

class RouteTableTest {

  @Test
  void readsTheDeclaredRouteOfEveryRpc() {
    RouteTable inventory = RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService"));
    Route a4 = inventory.route("ListWarehouseProducts");
    assertThat(a4.patternId()).isEqualTo("A4");
    assertThat(a4.index()).contains("GSI1");
    assertThat(a4.operations()).containsExactly(Operation.OPERATION_QUERY);
    assertThat(a4.consistency()).isEqualTo(Consistency.CONSISTENCY_EVENTUAL_ONLY);
    assertThat(a4.allowsStrongReads()).isFalse();
    assertThat(a4.partitionKey().render("W1")).isEqualTo("WAREHOUSE#W1");
    assertThat(a4.fanOut()).isEmpty();
    assertThat(inventory.routes()).hasSize(8);
  }

  @Test
  void readsTheFanOutOfARouteOnWriteShards() {
    Route a7 = RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService"))
        .route("ListLowStock");
    assertThat(a7.patternId()).isEqualTo("A7");
    Route.FanOut fanOut = a7.fanOut().orElseThrow();
    assertThat(fanOut.shardCount()).isEqualTo(16);
    assertThat(fanOut.shardOf().variables()).containsExactly("product_id", "warehouse_id");
    assertThat(fanOut.shardOf("P100", "W3")).isBetween(0, 15).isEqualTo(fanOut.shardOf("P100", "W3"));
    assertThat(a7.partitionKey().render(Route.FanOut.shardValue(7))).isEqualTo("LOW_STOCK#07");
  }

  @Test
  void everyPatternIdIsDeclaredOnce_acrossServices() {
    List<String> ids = List.of(
            RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")),
            RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService")))
        .stream().flatMap(t -> t.routes().stream()).map(Route::patternId).toList();
    assertThat(ids).doesNotHaveDuplicates().contains("A1", "A2", "A3", "A4", "A5", "A6", "A7");
  }

  @Test
  void refusesAServiceWhoseRpcsDeclareNoRoute() {
    assertThatThrownBy(() -> RouteTable.of(HealthProto.getDescriptor().findServiceByName("Health")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("grpc.health.v1.Health/Check has no (warehouse.routing.v1.route) option");
  }
}
