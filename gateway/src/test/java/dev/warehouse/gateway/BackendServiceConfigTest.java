package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.MethodDescriptor;
import dev.warehouse.gateway.backend.BackendServiceConfig;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import org.junit.jupiter.api.Test;

class BackendServiceConfigTest {

  @Test
  void retries_readsAndRequestIdWrites_only() {
    assertThat(BackendServiceConfig.retryableMethods(
            InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")))
        .extracting(MethodDescriptor::getName)
        .containsExactlyInAnyOrder("GetSerialItem", "GetProductInventory", "ListProductWarehouses",
            "ListWarehouseProducts", "AdjustStock");
    assertThat(BackendServiceConfig.retryableMethods(OrderServiceProto.getDescriptor().findServiceByName("OrderService")))
        .extracting(MethodDescriptor::getName)
        .containsExactlyInAnyOrder("GetOrder", "ListCustomerOrders", "PlaceOrder");
  }
}
