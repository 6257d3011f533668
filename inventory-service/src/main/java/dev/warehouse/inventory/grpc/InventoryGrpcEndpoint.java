package dev.warehouse.inventory.grpc;

import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.SerialItem;
import dev.warehouse.inventory.domain.StockAdjustment;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.SetStockBucketsRequest;
import dev.warehouse.inventory.v1.ListLowStockResponse;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesResponse;
import dev.warehouse.inventory.v1.ListWarehouseProductsRequest;
import dev.warehouse.inventory.v1.ListWarehouseProductsResponse;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.runtime.error.Violations;
import dev.warehouse.runtime.grpc.UnaryCalls;
import dev.warehouse.runtime.log.CallFields;
import dev.warehouse.runtime.paging.PageSize;
import dev.warehouse.runtime.routing.RouteTable;
import io.grpc.stub.StreamObserver;

/**
 * The gRPC face of the inventory: validates each request (every bad field named in one
 * INVALID_ARGUMENT, before anything is read or written), delegates to {@link InventoryService} and
 * maps the answer. Errors become statuses in {@code GrpcErrors}, nowhere else.
 */
public final class InventoryGrpcEndpoint extends InventoryServiceGrpc.InventoryServiceImplBase {

  /** Longest description accepted. */
  public static final int MAX_DESCRIPTION_LENGTH = 1024;
  /** Largest stock change in one call. */
  public static final long MAX_DELTA = 1_000_000_000L;

  private final InventoryService service;
  private final RouteTable routes;

  public InventoryGrpcEndpoint(InventoryService service, RouteTable routes) {
    this.service = service;
    this.routes = routes;
  }

  @Override
  public void getSerialItem(GetSerialItemRequest request, StreamObserver<dev.warehouse.inventory.v1.SerialItem> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String serialNumber = v.id("serial_number", request.getSerialNumber());
      v.throwIfAny();
      return service.getSerialItem(serialNumber, request.getConsistentRead());
    }, InventoryProtos::toProto);
  }

  @Override
  public void getProductInventory(GetProductInventoryRequest request,
      StreamObserver<dev.warehouse.inventory.v1.ProductInventory> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String productId = v.id("product_id", request.getProductId());
      String warehouseId = v.id("warehouse_id", request.getWarehouseId());
      v.throwIfAny();
      return service.getProductInventory(productId, warehouseId, request.getConsistentRead());
    }, InventoryProtos::toProto);
  }

  @Override
  public void listProductWarehouses(ListProductWarehousesRequest request,
      StreamObserver<ListProductWarehousesResponse> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String productId = v.id("product_id", request.getProductId());
      PageQuery page = page(v, "ListProductWarehouses", request.getPageSize(), request.getPageToken(),
          request.getConsistentRead());
      v.throwIfAny();
      return service.listProductWarehouses(productId, page);
    }, InventoryProtos::toProductWarehouses);
  }

  @Override
  public void listWarehouseProducts(ListWarehouseProductsRequest request,
      StreamObserver<ListWarehouseProductsResponse> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String warehouseId = v.id("warehouse_id", request.getWarehouseId());
      PageQuery page = page(v, "ListWarehouseProducts", request.getPageSize(), request.getPageToken(),
          request.getConsistentRead());
      v.throwIfAny();
      return service.listWarehouseProducts(warehouseId, page);
    }, InventoryProtos::toWarehouseProducts);
  }

  @Override
  public void putSerialItem(PutSerialItemRequest request, StreamObserver<dev.warehouse.inventory.v1.SerialItem> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      if (!request.hasItem()) {
        v.add("item", "is required");
        v.throwIfAny();
      }
      dev.warehouse.inventory.v1.SerialItem item = request.getItem();
      SerialItem serialItem = new SerialItem(
          v.id("item.serial_number", item.getSerialNumber()),
          v.id("item.product_id", item.getProductId()),
          v.id("item.warehouse_id", item.getWarehouseId()),
          v.text("item.description", item.getDescription(), MAX_DESCRIPTION_LENGTH),
          null);
      v.throwIfAny();
      return service.putSerialItem(serialItem);
    }, InventoryProtos::toProto);
  }

  @Override
  public void putProductInventory(PutProductInventoryRequest request,
      StreamObserver<dev.warehouse.inventory.v1.ProductInventory> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      if (!request.hasInventory()) {
        v.add("inventory", "is required");
        v.throwIfAny();
      }
      dev.warehouse.inventory.v1.ProductInventory inventory = request.getInventory();
      quantity(v, "inventory.quantity", inventory.getQuantity());
      quantity(v, "inventory.reorder_point", inventory.getReorderPoint());
      ProductInventory stock = new ProductInventory(
          v.id("inventory.product_id", inventory.getProductId()),
          v.id("inventory.warehouse_id", inventory.getWarehouseId()),
          inventory.getQuantity(),
          inventory.getReorderPoint(),
          null);
      v.throwIfAny();
      return service.putProductInventory(stock);
    }, InventoryProtos::toProto);
  }

  @Override
  public void adjustStock(AdjustStockRequest request, StreamObserver<dev.warehouse.inventory.v1.ProductInventory> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String productId = v.id("product_id", request.getProductId());
      String warehouseId = v.id("warehouse_id", request.getWarehouseId());
      String requestId = v.id("request_id", request.getRequestId());
      if (request.getDelta() == 0) {
        v.add("delta", "must not be zero");
      } else if (request.getDelta() < -MAX_DELTA || request.getDelta() > MAX_DELTA) {
        v.add("delta", "must be between -" + MAX_DELTA + " and " + MAX_DELTA);
      }
      v.throwIfAny();
      CallFields.requestId(requestId);
      return service.adjustStock(new StockAdjustment(productId, warehouseId, request.getDelta(), requestId));
    }, InventoryProtos::toProto);
  }

  @Override
  public void setStockBuckets(SetStockBucketsRequest request, StreamObserver<dev.warehouse.inventory.v1.ProductInventory> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      String productId = v.id("product_id", request.getProductId());
      String warehouseId = v.id("warehouse_id", request.getWarehouseId());
      if (request.getBucketCount() < 1 || request.getBucketCount() > ProductInventory.MAX_BUCKETS) {
        v.add("bucket_count", "must be between 1 and " + ProductInventory.MAX_BUCKETS);
      }
      v.throwIfAny();
      return service.setStockBuckets(productId, warehouseId, request.getBucketCount());
    }, InventoryProtos::toProto);
  }

  @Override
  public void listLowStock(ListLowStockRequest request, StreamObserver<ListLowStockResponse> observer) {
    UnaryCalls.reply(observer, () -> {
      Violations v = new Violations();
      PageQuery page = page(v, "ListLowStock", request.getPageSize(), request.getPageToken(), request.getConsistentRead());
      v.throwIfAny();
      return service.listLowStock(page);
    }, InventoryProtos::toLowStock);
  }

  /** A count of units: from 0 to {@link ProductInventory#MAX_QUANTITY}. */
  private static void quantity(Violations v, String field, long value) {
    if (value < 0) {
      v.add(field, "must not be negative");
    } else if (value > ProductInventory.MAX_QUANTITY) {
      v.add(field, "must be at most " + ProductInventory.MAX_QUANTITY);
    }
  }

  /** Page size and token per AIP-158, and the consistency the method's route allows. */
  private PageQuery page(Violations v, String method, int pageSize, String pageToken, boolean consistentRead) {
    if (consistentRead && !routes.route(method).allowsStrongReads()) {
      v.add("consistent_read", "must be false: this list is read from a secondary index, which is eventually consistent");
    }
    return new PageQuery(PageSize.resolve(pageSize, v), pageToken, consistentRead);
  }
}
