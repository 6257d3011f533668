package dev.warehouse.bench.standin;

import com.google.protobuf.Timestamp;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesResponse;
import dev.warehouse.inventory.v1.ListWarehouseProductsRequest;
import dev.warehouse.inventory.v1.ListWarehouseProductsResponse;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.ListCustomerOrdersResponse;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.process.GrpcServer;
import io.grpc.BindableService;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;

/**
 * Both contracts with canned answers, built once: a backend that costs next to nothing, so a proxy
 * comparison measures the proxies, not the store. {@code java -jar bench.jar standin PORT}.
 */
public final class StandInBackend {

  private static final Timestamp NOW = Timestamp.newBuilder().setSeconds(1_785_000_000L).build();
  private static final SerialItem SERIAL = SerialItem.newBuilder().setSerialNumber("SN-98471").setProductId("P100")
      .setWarehouseId("W1").setDescription("Pallet jack").setUpdateTime(NOW).build();
  private static final ProductInventory STOCK = ProductInventory.newBuilder().setProductId("P100").setWarehouseId("W1")
      .setQuantity(40).setUpdateTime(NOW).build();
  private static final Order ORDER = Order.newBuilder().setOrderId("O900").setCustomerId("C4821").setOrderDate("2026-07-26")
      .setStatus(OrderStatus.ORDER_STATUS_PLACED).setVersion(1).setCreateTime(NOW).setUpdateTime(NOW)
      .setTotal(com.google.type.Money.newBuilder().setCurrencyCode("EUR").setUnits(129)).build();

  private StandInBackend() {}

  public static List<BindableService> services() {
    return List.of(new InventoryServiceGrpc.InventoryServiceImplBase() {
      @Override
      public void getSerialItem(GetSerialItemRequest request, StreamObserver<SerialItem> o) {
        reply(o, SERIAL);
      }

      @Override
      public void getProductInventory(GetProductInventoryRequest request, StreamObserver<ProductInventory> o) {
        reply(o, STOCK);
      }

      @Override
      public void listProductWarehouses(ListProductWarehousesRequest request, StreamObserver<ListProductWarehousesResponse> o) {
        reply(o, ListProductWarehousesResponse.newBuilder().addInventories(STOCK).addInventories(STOCK).build());
      }

      @Override
      public void listWarehouseProducts(ListWarehouseProductsRequest request, StreamObserver<ListWarehouseProductsResponse> o) {
        reply(o, ListWarehouseProductsResponse.newBuilder().addInventories(STOCK).addInventories(STOCK).build());
      }

      @Override
      public void putSerialItem(PutSerialItemRequest request, StreamObserver<SerialItem> o) {
        reply(o, SERIAL);
      }

      @Override
      public void putProductInventory(PutProductInventoryRequest request, StreamObserver<ProductInventory> o) {
        reply(o, STOCK);
      }

      @Override
      public void adjustStock(AdjustStockRequest request, StreamObserver<ProductInventory> o) {
        reply(o, STOCK);
      }
    }, new OrderServiceGrpc.OrderServiceImplBase() {
      @Override
      public void placeOrder(PlaceOrderRequest request, StreamObserver<Order> o) {
        reply(o, ORDER);
      }

      @Override
      public void getOrder(GetOrderRequest request, StreamObserver<Order> o) {
        reply(o, ORDER);
      }

      @Override
      public void listCustomerOrders(ListCustomerOrdersRequest request, StreamObserver<ListCustomerOrdersResponse> o) {
        reply(o, ListCustomerOrdersResponse.newBuilder().addOrders(ORDER).addOrders(ORDER).build());
      }

      @Override
      public void updateOrderStatus(UpdateOrderStatusRequest request, StreamObserver<Order> o) {
        reply(o, ORDER);
      }
    });
  }

  private static <T> void reply(StreamObserver<T> observer, T value) {
    observer.onNext(value);
    observer.onCompleted();
  }

  /** Serves until killed. */
  public static void main(String[] args) throws Exception {
    GrpcServer server = new GrpcServer(NettyServerBuilder.forPort(Integer.parseInt(args[0])).directExecutor(),
        services(), List.of(), Duration.ZERO, Duration.ofSeconds(1)).start();
    Runtime.getRuntime().addShutdownHook(new Thread(server::stop));
    server.awaitTermination();
  }
}
