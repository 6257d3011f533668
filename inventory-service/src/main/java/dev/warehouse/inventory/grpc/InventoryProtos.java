package dev.warehouse.inventory.grpc;

import com.google.protobuf.Timestamp;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.SerialItem;
import dev.warehouse.inventory.v1.ListLowStockResponse;
import dev.warehouse.inventory.v1.ListProductWarehousesResponse;
import dev.warehouse.inventory.v1.ListWarehouseProductsResponse;
import dev.warehouse.runtime.paging.Page;
import java.time.Instant;

/** Domain records to contract messages. */
final class InventoryProtos {

  private InventoryProtos() {}

  static dev.warehouse.inventory.v1.SerialItem toProto(SerialItem item) {
    return dev.warehouse.inventory.v1.SerialItem.newBuilder()
        .setSerialNumber(item.serialNumber())
        .setProductId(item.productId())
        .setWarehouseId(item.warehouseId())
        .setDescription(item.description())
        .setUpdateTime(timestamp(item.updateTime()))
        .build();
  }

  static dev.warehouse.inventory.v1.ProductInventory toProto(ProductInventory inventory) {
    return dev.warehouse.inventory.v1.ProductInventory.newBuilder()
        .setProductId(inventory.productId())
        .setWarehouseId(inventory.warehouseId())
        .setQuantity(inventory.quantity())
        .setReserved(inventory.reserved())
        .setAvailable(inventory.available())
        .setReorderPoint(inventory.reorderPoint())
        .setBucketCount(inventory.bucketCount())
        .setUpdateTime(timestamp(inventory.updateTime()))
        .build();
  }

  static ListProductWarehousesResponse toProductWarehouses(Page<ProductInventory> page) {
    ListProductWarehousesResponse.Builder response = ListProductWarehousesResponse.newBuilder()
        .setNextPageToken(page.nextPageToken());
    page.items().forEach(i -> response.addInventories(toProto(i)));
    return response.build();
  }

  static ListWarehouseProductsResponse toWarehouseProducts(Page<ProductInventory> page) {
    ListWarehouseProductsResponse.Builder response = ListWarehouseProductsResponse.newBuilder()
        .setNextPageToken(page.nextPageToken());
    page.items().forEach(i -> response.addInventories(toProto(i)));
    return response.build();
  }

  static ListLowStockResponse toLowStock(Page<ProductInventory> page) {
    ListLowStockResponse.Builder response = ListLowStockResponse.newBuilder().setNextPageToken(page.nextPageToken());
    page.items().forEach(i -> response.addInventories(toProto(i)));
    return response.build();
  }

  private static Timestamp timestamp(Instant instant) {
    return Timestamp.newBuilder().setSeconds(instant.getEpochSecond()).setNanos(instant.getNano()).build();
  }
}
