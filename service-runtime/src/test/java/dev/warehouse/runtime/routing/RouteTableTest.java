package dev.warehouse.runtime.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodOptions;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.EmptyProto;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.routing.v1.Consistency;
import dev.warehouse.routing.v1.ItemKey;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.routing.v1.RouteProto;
import dev.warehouse.routing.v1.SortKeyCondition;
import io.grpc.health.v1.HealthProto;
import java.util.List;
import org.junit.jupiter.api.Test;

class RouteTableTest {

  /** The routes of the services a port serves: those that declare them; health and the admin service declare none. */
  @Test
  void declared_takesTheRoutesOfTheServicesThatDeclareThem_andLeavesTheOthersOut() {
    List<Route> routes = RouteTable.declared(List.of(dev.warehouse.order.v1.OrderServiceGrpc.getServiceDescriptor(),
        io.grpc.health.v1.HealthGrpc.getServiceDescriptor(), dev.warehouse.admin.v1.AdminServiceGrpc.getServiceDescriptor()));
    assertThat(routes).extracting(Route::fullMethodName)
        .containsExactlyInAnyOrderElementsOf(RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService"))
            .routes().stream().map(Route::fullMethodName).toList())
        .contains("warehouse.order.v1.OrderService/GetOrder");
    assertThat(routes).filteredOn(route -> route.methodName().equals("GetOrder")).singleElement()
        .extracting(Route::ownerFields).isEqualTo(List.of("customer_id"));
  }

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
    assertThat(inventory.routes()).hasSize(9);
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

  @Test
  void readsHowATransactionWritesEachOfItsItems() {
    Route w3 = RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")).route("AdjustStock");
    assertThat(w3.transacts()).isTrue();
    assertThat(w3.writes()).containsExactly(Operation.OPERATION_UPDATE_ITEM);
    assertThat(w3.alsoWrites()).extracting(Route.ItemKey::writes).containsExactly(
        List.of(Operation.OPERATION_UPDATE_ITEM),
        List.of(Operation.OPERATION_PUT_ITEM),
        List.of(Operation.OPERATION_PUT_ITEM, Operation.OPERATION_DELETE_ITEM));
  }

  @Test
  void readsTheKeysARouteAlsoReads_andTheOperationsItSendsOnlyForSplitStock() {
    Route a2 = RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService"))
        .route("GetProductInventory");
    assertThat(a2.operations()).containsExactly(Operation.OPERATION_GET_ITEM);
    assertThat(a2.splitOperations()).containsExactly(Operation.OPERATION_TRANSACT_GET_ITEMS);
    assertThat(a2.alsoReads()).extracting(k -> k.partitionKey() + " / " + k.sortKey()).containsExactly(
        "PRODUCT#{product_id} / WAREHOUSE#{warehouse_id}", "PRODUCT#{product_id}#BUCKET#{bucket} / WAREHOUSE#{warehouse_id}");
    assertThat(a2.alsoReads()).allSatisfy(k -> assertThat(k.writes()).isEmpty());
  }

  @Test
  void refusesATransactionThatDoesNotSayHowItWritesAnItem_andWritesOutsideOne() throws Exception {
    dev.warehouse.routing.v1.Route transacting = dev.warehouse.routing.v1.Route.newBuilder()
        .setPatternId("W9").setRequest("a test route").addOperations(Operation.OPERATION_TRANSACT_WRITE_ITEMS)
        .setPartitionKey("A#{a}").setSortKey("B").addSortKeyConditions(SortKeyCondition.SORT_KEY_CONDITION_EQUALS)
        .setConsistency(Consistency.CONSISTENCY_WRITE).addWrites(Operation.OPERATION_PUT_ITEM)
        .addAlsoWrites(ItemKey.newBuilder().setPartitionKey("C#{c}").setSortKey("D"))
        .build();
    assertThatThrownBy(() -> RouteTable.of(serviceWith(transacting)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("test.S/Call has an incomplete route: missing writes of also_writes C#{c} / D");
    assertThatThrownBy(() -> RouteTable.of(serviceWith(transacting.toBuilder().clearWrites()
            .setAlsoWrites(0, transacting.getAlsoWrites(0).toBuilder().addWrites(Operation.OPERATION_DELETE_ITEM)).build())))
        .hasMessageContaining("missing writes (how the transaction writes the main key)");
    assertThatThrownBy(() -> RouteTable.of(serviceWith(transacting.toBuilder()
            .setOperations(0, Operation.OPERATION_PUT_ITEM).clearAlsoWrites().build())))
        .hasMessageContaining("missing operations: OPERATION_TRANSACT_WRITE_ITEMS, for writes and also_writes");

    Route complete = RouteTable.of(serviceWith(transacting.toBuilder()
            .setAlsoWrites(0, transacting.getAlsoWrites(0).toBuilder().addWrites(Operation.OPERATION_CONDITION_CHECK_ITEM))
            .build()))
        .route("Call");
    assertThat(complete.alsoWrites().get(0).writes()).containsExactly(Operation.OPERATION_CONDITION_CHECK_ITEM);
  }

  /** A one-method service {@code test.S/Call} declaring {@code route}. */
  private static ServiceDescriptor serviceWith(dev.warehouse.routing.v1.Route route) throws Exception {
    FileDescriptorProto file = FileDescriptorProto.newBuilder()
        .setName("test/route_table_test.proto").setPackage("test").setSyntax("proto3")
        .addDependency(EmptyProto.getDescriptor().getName())
        .addService(ServiceDescriptorProto.newBuilder().setName("S").addMethod(MethodDescriptorProto.newBuilder()
            .setName("Call").setInputType(".google.protobuf.Empty").setOutputType(".google.protobuf.Empty")
            .setOptions(MethodOptions.newBuilder().setExtension(RouteProto.route, route))))
        .build();
    return FileDescriptor.buildFrom(file, new FileDescriptor[] {EmptyProto.getDescriptor()}).findServiceByName("S");
  }
}
