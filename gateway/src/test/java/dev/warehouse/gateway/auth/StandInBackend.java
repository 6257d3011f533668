package dev.warehouse.gateway.auth;

import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.process.GrpcServer;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Both backend contracts on one real Netty server, with canned answers, counting every call that
 * reaches it: what "the backend never sees the call" is checked against.
 */
final class StandInBackend implements AutoCloseable {

  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  private final GrpcServer server;

  private StandInBackend() throws Exception {
    ServerInterceptor counting = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        calls.computeIfAbsent(call.getMethodDescriptor().getFullMethodName(), m -> new AtomicInteger()).incrementAndGet();
        return next.startCall(call, headers);
      }
    };
    server = new GrpcServer(NettyServerBuilder.forPort(0), List.of(new Inventory(), new Orders()), List.of(counting),
        Duration.ZERO, Duration.ofSeconds(1)).start();
  }

  static StandInBackend start() throws Exception {
    return new StandInBackend();
  }

  String address() {
    return "127.0.0.1:" + server.port();
  }

  /** Calls that reached the backend, of every method. */
  int calls() {
    return calls.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  int calls(String fullMethodName) {
    AtomicInteger count = calls.get(fullMethodName);
    return count == null ? 0 : count.get();
  }

  @Override
  public void close() {
    server.stop();
  }

  static final class Inventory extends InventoryServiceGrpc.InventoryServiceImplBase {
    @Override
    public void getSerialItem(GetSerialItemRequest request, StreamObserver<SerialItem> observer) {
      observer.onNext(SerialItem.newBuilder().setSerialNumber(request.getSerialNumber()).setProductId("P1")
          .setWarehouseId("W1").build());
      observer.onCompleted();
    }

    @Override
    public void getProductInventory(GetProductInventoryRequest request, StreamObserver<ProductInventory> observer) {
      observer.onNext(ProductInventory.newBuilder().setProductId(request.getProductId())
          .setWarehouseId(request.getWarehouseId()).setQuantity(7).build());
      observer.onCompleted();
    }

    @Override
    public void putProductInventory(PutProductInventoryRequest request, StreamObserver<ProductInventory> observer) {
      observer.onNext(request.getInventory());
      observer.onCompleted();
    }

    /** Answers 10 + delta; below zero, INSUFFICIENT_STOCK as the real service words it. */
    @Override
    public void adjustStock(AdjustStockRequest request, StreamObserver<ProductInventory> observer) {
      if (10 + request.getDelta() < 0) {
        observer.onError(GrpcErrors.toStatusException(new FailedPreconditionException("INSUFFICIENT_STOCK",
            "not enough stock", Map.of("available", "10"))));
        return;
      }
      observer.onNext(ProductInventory.newBuilder().setProductId(request.getProductId())
          .setWarehouseId(request.getWarehouseId()).setQuantity(10 + request.getDelta()).build());
      observer.onCompleted();
    }
  }

  private static final class Orders extends OrderServiceGrpc.OrderServiceImplBase {
    @Override
    public void placeOrder(PlaceOrderRequest request, StreamObserver<Order> observer) {
      observer.onNext(Order.newBuilder().setOrderId("O-" + request.getRequestId()).setCustomerId(request.getCustomerId())
          .build());
      observer.onCompleted();
    }

    @Override
    public void getOrder(GetOrderRequest request, StreamObserver<Order> observer) {
      observer.onNext(Order.newBuilder().setOrderId(request.getOrderId()).build());
      observer.onCompleted();
    }
  }
}
