package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.MethodOptions.IdempotencyLevel;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.runtime.discovery.BackendServiceConfig;
import dev.warehouse.runtime.routing.RouteTable;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderServiceProto;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which calls the gateway may repeat: what each method's {@code idempotency_level} declares, nothing else. */
class BackendServiceConfigTest {

  private static final ServiceDescriptor INVENTORY = InventoryServiceProto.getDescriptor().findServiceByName("InventoryService");
  private static final ServiceDescriptor ORDERS = OrderServiceProto.getDescriptor().findServiceByName("OrderService");
  private static final List<ServiceDescriptor> SERVICES = List.of(INVENTORY, ORDERS);

  private static List<String> names(List<MethodDescriptor> methods) {
    return methods.stream().map(MethodDescriptor::getName).toList();
  }

  private static List<String> declared(ServiceDescriptor service, IdempotencyLevel... levels) {
    Set<IdempotencyLevel> wanted = Set.of(levels);
    return names(service.getMethods().stream().filter(m -> wanted.contains(m.getOptions().getIdempotencyLevel())).toList());
  }

  @Test
  void retries_exactlyTheMethodsDeclaredNoSideEffectsOrIdempotent() {
    for (ServiceDescriptor service : SERVICES) {
      assertThat(names(BackendServiceConfig.retryableMethods(service))).as(service.getName())
          .containsExactlyInAnyOrderElementsOf(declared(service, IdempotencyLevel.NO_SIDE_EFFECTS, IdempotencyLevel.IDEMPOTENT));
    }
  }

  /**
   * A method's idempotency level agrees with its route, the other declaration of what it does, instead of with a
   * list kept here by hand: a method whose route only reads (GetItem, Query) is declared {@code NO_SIDE_EFFECTS}, and
   * one that writes is not.
   */
  @Test
  void aMethodIsDeclaredARead_exactlyWhenItsRouteOnlyReads() {
    Set<Operation> reads = Set.of(Operation.OPERATION_GET_ITEM, Operation.OPERATION_QUERY);
    for (ServiceDescriptor service : SERVICES) {
      RouteTable routes = RouteTable.of(service);
      for (MethodDescriptor method : service.getMethods()) {
        boolean onlyReads = reads.containsAll(routes.route(method.getName()).operations());
        assertThat(method.getOptions().getIdempotencyLevel() == IdempotencyLevel.NO_SIDE_EFFECTS)
            .as(method.getFullName() + " reads only: " + routes.route(method.getName()).operations()).isEqualTo(onlyReads);
      }
    }
    assertThat(declared(INVENTORY, IdempotencyLevel.NO_SIDE_EFFECTS)).as("the contracts declare reads at all").isNotEmpty();
    assertThat(declared(ORDERS, IdempotencyLevel.NO_SIDE_EFFECTS)).isNotEmpty();
  }

  @Test
  void writesWithoutADeclaredLevel_areNeverRetried() {
    // By the full names the gateway compares with the forwarded call's method.
    assertThat(BackendServiceConfig.retryableFullNames(INVENTORY)).doesNotContain(
            InventoryServiceGrpc.getPutSerialItemMethod().getFullMethodName(),
            InventoryServiceGrpc.getPutProductInventoryMethod().getFullMethodName())
        .contains(InventoryServiceGrpc.getAdjustStockMethod().getFullMethodName());
    assertThat(BackendServiceConfig.retryableFullNames(ORDERS))
        .doesNotContain(OrderServiceGrpc.getUpdateOrderStatusMethod().getFullMethodName())
        .contains(OrderServiceGrpc.getGetOrderMethod().getFullMethodName());
  }

  /**
   * The contract's rule for idempotency keys: a request with a {@code request_id} promises that a
   * repeat is applied once, so its method must say so ({@code IDEMPOTENT}), or the gateway would
   * never retry it.
   */
  @Test
  void everyMethodWithARequestId_isDeclaredIdempotent() {
    for (ServiceDescriptor service : SERVICES) {
      for (MethodDescriptor method : service.getMethods()) {
        if (method.getInputType().findFieldByName("request_id") != null) {
          assertThat(method.getOptions().getIdempotencyLevel()).as(method.getFullName() + " has a request_id")
              .isEqualTo(IdempotencyLevel.IDEMPOTENT);
        }
      }
    }
  }
}
