package dev.warehouse.bench.target;

import static dev.warehouse.bench.data.DataSet.customer;
import static dev.warehouse.bench.data.DataSet.order;
import static dev.warehouse.bench.data.DataSet.product;
import static dev.warehouse.bench.data.DataSet.serial;
import static dev.warehouse.bench.data.DataSet.warehouse;
import static dev.warehouse.bench.data.DataSet.warehouseOf;

import com.google.type.Money;
import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.Call;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ListWarehouseProductsRequest;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongToIntFunction;

/** Calls through gRPC: the gateway, or one service (or a stand-in) directly. */
public final class GrpcTarget implements Target, AutoCloseable {

  private static final OrderStatus[] STEPS = {
      OrderStatus.ORDER_STATUS_PAID, OrderStatus.ORDER_STATUS_SHIPPED, OrderStatus.ORDER_STATUS_DELIVERED};

  private final String name;
  private final EventLoopGroup loop;
  private final ManagedChannel inventoryChannel;
  private final ManagedChannel orderChannel;
  private final InventoryServiceGrpc.InventoryServiceStub inventory;
  private final OrderServiceGrpc.OrderServiceStub orders;
  private final DataSet data;
  private final AtomicLong statusChanges = new AtomicLong();

  /** {@code inventoryAddress} and {@code orderAddress} may be the same (the gateway). Plaintext. */
  public GrpcTarget(String name, String inventoryAddress, String orderAddress, DataSet data) {
    this(name, inventoryAddress, orderAddress, data, InsecureChannelCredentials.create(), List.of());
  }

  /** Over channels with {@code credentials} (TLS), each call passing through {@code interceptors} (a bearer token). */
  public GrpcTarget(String name, String inventoryAddress, String orderAddress, DataSet data,
      ChannelCredentials credentials, List<ClientInterceptor> interceptors) {
    this.name = name;
    this.data = data;
    this.loop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("bench-" + name, true), NioIoHandler.newFactory());
    this.inventoryChannel = channel(inventoryAddress, credentials);
    this.orderChannel = orderAddress.equals(inventoryAddress) ? inventoryChannel : channel(orderAddress, credentials);
    this.inventory = InventoryServiceGrpc.newStub(inventoryChannel).withInterceptors(interceptors.toArray(ClientInterceptor[]::new));
    this.orders = OrderServiceGrpc.newStub(orderChannel).withInterceptors(interceptors.toArray(ClientInterceptor[]::new));
  }

  /**
   * Answers are taken on the I/O thread that read them, as the DynamoDB target takes them on the SDK's
   * (a hand-off to gRPC's default executor was one thread wake-up more per call on the gRPC layers
   * only, counted in their latency and in the service's "adds"), and on one event loop, where the
   * calls' deadline timers are set too: in the shared default group they landed on another loop,
   * waking it for every call.
   */
  private ManagedChannel channel(String address, ChannelCredentials credentials) {
    return NettyChannelBuilder.forTarget(address, credentials)
        .eventLoopGroup(loop).channelType(NioSocketChannel.class).directExecutor().build();
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Call call(Op op, LongToIntFunction key) {
    return switch (op) {
      case GET_SERIAL_ITEM -> i -> GrpcTarget.<dev.warehouse.inventory.v1.SerialItem>unary(o -> inventory().getSerialItem(GetSerialItemRequest.newBuilder()
          .setSerialNumber(serial(key.applyAsInt(i) % data.serials)).build(), o));
      case GET_PRODUCT_INVENTORY -> i -> {
        int p = key.applyAsInt(i) % data.products;
        return GrpcTarget.<dev.warehouse.inventory.v1.ProductInventory>unary(o -> inventory().getProductInventory(GetProductInventoryRequest.newBuilder()
            .setProductId(product(p)).setWarehouseId(warehouseOf(p, 0)).build(), o));
      };
      case LIST_PRODUCT_WAREHOUSES -> i -> GrpcTarget.<dev.warehouse.inventory.v1.ListProductWarehousesResponse>unary(o -> inventory().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
          .setProductId(product(key.applyAsInt(i) % data.products)).build(), o));
      case LIST_WAREHOUSE_PRODUCTS -> i -> GrpcTarget.<dev.warehouse.inventory.v1.ListWarehouseProductsResponse>unary(o -> inventory().listWarehouseProducts(ListWarehouseProductsRequest.newBuilder()
          .setWarehouseId(warehouse(key.applyAsInt(i) % DataSet.WAREHOUSES)).setPageSize(25).build(), o));
      case LIST_CUSTOMER_ORDERS -> i -> GrpcTarget.<dev.warehouse.order.v1.ListCustomerOrdersResponse>unary(o -> orders().listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
          .setCustomerId(customer(key.applyAsInt(i) % data.customers)).build(), o));
      case GET_ORDER -> i -> GrpcTarget.<dev.warehouse.order.v1.Order>unary(o -> orders().getOrder(GetOrderRequest.newBuilder()
          .setOrderId(order(key.applyAsInt(i) % data.customers, 0)).build(), o));
      case PLACE_ORDER -> i -> {
        int k = key.applyAsInt(i);
        int p = k % data.products;
        // One unit of a loaded product (a million units each): the order holds it at the inventory.
        return GrpcTarget.<dev.warehouse.order.v1.Order>unary(o -> orders().placeOrder(PlaceOrderRequest.newBuilder()
            .setCustomerId(customer(k % data.customers))
            .setOrderId("B-" + UUID.randomUUID()).setOrderDate("2026-12-02")
            .addLines(dev.warehouse.order.v1.OrderLine.newBuilder().setProductId(product(p)).setWarehouseId(warehouseOf(p, 0))
                .setQuantity(1).setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(25)))
            .setRequestId(UUID.randomUUID().toString()).build(), o));
      };
      case UPDATE_ORDER_STATUS -> i -> {
        // Each loaded order walks PAID, SHIPPED, DELIVERED; consecutive changes touch different orders.
        long n = statusChanges.getAndIncrement();
        long orderCount = (long) data.customers * DataSet.ORDERS_PER_CUSTOMER;
        int index = (int) (n % orderCount);
        OrderStatus next = STEPS[(int) Math.min(STEPS.length - 1, n / orderCount)];
        return GrpcTarget.<dev.warehouse.order.v1.Order>unary(o -> orders().updateOrderStatus(UpdateOrderStatusRequest.newBuilder()
            .setOrderId(order(index / DataSet.ORDERS_PER_CUSTOMER, index % DataSet.ORDERS_PER_CUSTOMER))
            .setStatus(next).build(), o));
      };
      case LIST_LOW_STOCK -> i -> GrpcTarget.<dev.warehouse.inventory.v1.ListLowStockResponse>unary(o -> inventory().listLowStock(
          ListLowStockRequest.newBuilder().setPageSize(25).build(), o));
      case PUT_SERIAL_ITEM -> i -> {
        // A serial item the data set does not hold: each call records a new one, as on receipt of goods.
        int n = data.serials + key.applyAsInt(i);
        int p = n % data.products;
        return GrpcTarget.<dev.warehouse.inventory.v1.SerialItem>unary(o -> inventory().putSerialItem(PutSerialItemRequest.newBuilder()
            .setItem(dev.warehouse.inventory.v1.SerialItem.newBuilder().setSerialNumber(serial(n)).setProductId(product(p))
                .setWarehouseId(warehouseOf(p, 0)).setDescription("bench item " + n)).build(), o));
      };
      case PUT_PRODUCT_INVENTORY -> i -> {
        // A stock take that finds the product's first warehouse low: the record and its new low-stock marker.
        int p = key.applyAsInt(i) % data.products;
        return GrpcTarget.<dev.warehouse.inventory.v1.ProductInventory>unary(o -> inventory().putProductInventory(
            PutProductInventoryRequest.newBuilder().setInventory(dev.warehouse.inventory.v1.ProductInventory.newBuilder()
                .setProductId(product(p)).setWarehouseId(warehouseOf(p, 0)).setQuantity(5).setReorderPoint(10)).build(), o));
      };
      case ADJUST_STOCK -> i -> {
        // A pick from the product's second warehouse, far above its reorder point: no marker moves.
        int p = key.applyAsInt(i) % data.products;
        return GrpcTarget.<dev.warehouse.inventory.v1.ProductInventory>unary(o -> inventory().adjustStock(AdjustStockRequest.newBuilder()
            .setProductId(product(p)).setWarehouseId(warehouseOf(p, 1)).setDelta(-1)
            .setRequestId(UUID.randomUUID().toString()).build(), o));
      };
    };
  }

  private InventoryServiceGrpc.InventoryServiceStub inventory() {
    return inventory.withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private OrderServiceGrpc.OrderServiceStub orders() {
    return orders.withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  /** Adapts an async stub call to a future. */
  public static <T> CompletableFuture<T> unary(java.util.function.Consumer<StreamObserver<T>> call) {
    CompletableFuture<T> future = new CompletableFuture<>();
    call.accept(new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        future.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        future.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    });
    return future;
  }

  @Override
  public void close() throws InterruptedException {
    inventoryChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    orderChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    loop.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }
}
