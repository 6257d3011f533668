package dev.warehouse.inventory.domain;

import dev.warehouse.runtime.error.NotFoundException;
import dev.warehouse.runtime.paging.Page;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The inventory's use cases, in plain Java: no gRPC, no generated classes. Inputs arrive validated;
 * this class stamps times and turns absent items into NOT_FOUND.
 */
public final class InventoryService {

  private final InventoryRepository repository;
  private final Clock clock;

  public InventoryService(InventoryRepository repository, Clock clock) {
    this.repository = repository;
    this.clock = clock;
  }

  public CompletableFuture<SerialItem> getSerialItem(String serialNumber, boolean consistentRead) {
    return repository.findSerialItem(serialNumber, consistentRead)
        .thenApply(found -> found.orElseThrow(() -> new NotFoundException("SERIAL_ITEM_NOT_FOUND",
            "no item has serial number " + serialNumber, Map.of("serial_number", serialNumber))));
  }

  public CompletableFuture<ProductInventory> getProductInventory(String productId, String warehouseId, boolean consistentRead) {
    return repository.findInventory(productId, warehouseId, consistentRead)
        .thenApply(found -> found.orElseThrow(() -> inventoryNotFound(productId, warehouseId)));
  }

  public CompletableFuture<Page<ProductInventory>> listProductWarehouses(String productId, PageQuery page) {
    return repository.listByProduct(productId, page);
  }

  public CompletableFuture<Page<ProductInventory>> listWarehouseProducts(String warehouseId, PageQuery page) {
    return repository.listByWarehouse(warehouseId, page);
  }

  public CompletableFuture<Page<ProductInventory>> listLowStock(PageQuery page) {
    return repository.listLowStock(page);
  }

  public CompletableFuture<SerialItem> putSerialItem(SerialItem item) {
    return repository.putSerialItem(item.withUpdateTime(clock.instant()));
  }

  public CompletableFuture<ProductInventory> putProductInventory(ProductInventory inventory) {
    return repository.putInventory(inventory.withUpdateTime(clock.instant()));
  }

  public CompletableFuture<ProductInventory> adjustStock(StockAdjustment adjustment) {
    return repository.adjustStock(adjustment, clock.instant());
  }

  /** W10; {@code bucketCount} is 1 to {@link ProductInventory#MAX_BUCKETS}, checked by the caller. */
  public CompletableFuture<ProductInventory> setStockBuckets(String productId, String warehouseId, int bucketCount) {
    return repository.setBucketCount(productId, warehouseId, bucketCount, clock.instant());
  }

  /** The NOT_FOUND of a product that is not stocked at a warehouse. */
  public static NotFoundException inventoryNotFound(String productId, String warehouseId) {
    return new NotFoundException("PRODUCT_INVENTORY_NOT_FOUND",
        "product " + productId + " is not stocked at warehouse " + warehouseId,
        Map.of("product_id", productId, "warehouse_id", warehouseId));
  }
}
