package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.type.Money;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.order.OrderMain;
import dev.warehouse.order.OrderSettings;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.runtime.tls.ChannelTlsConfig;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.process.ProcessSettings;
import dev.warehouse.runtime.service.StoreContext;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.runtime.testing.RecordingInterceptor;
import dev.warehouse.runtime.testing.TestServices;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A rolling restart behind the gateway, in one JVM: two instances of each service, each stopped in turn
 * as its shutdown hook stops it on SIGTERM ({@link ServerProcess#close}) and started again on its port
 * (the gateway's address lists are static), while writes the gateway never retries
 * (UpdateOrderStatus, PutProductInventory, PutSerialItem) stream through the gateway. None may fail.
 */
@Tag("integration")
class RollingRestartTest {

  private static final int CALLERS_PER_SERVICE = 4;
  private static final Duration AWAIT = Duration.ofSeconds(30);
  /** The product every order buys one unit of: stocked with plenty before the restarts. */
  private static final String PRODUCT = "P-ROLLING";

  /** One instance of a service on a fixed port, which can be stopped and started again on it. */
  private static final class Instance implements AutoCloseable {
    final StoreServiceConfig config;
    final Function<StoreContext, List<BindableService>> services;
    volatile RecordingInterceptor recorder;
    volatile ServerProcess process;

    /** An instance on a port of its own, with the production drain delay. */
    Instance(String serviceName, String table, Function<StoreContext, List<BindableService>> services) {
      StoreServiceConfig test = TestServices.config(serviceName, table);
      this.config = new StoreServiceConfig(test.serviceName(), freePort(), test.metricsPort(), test.dynamoEndpoint(),
          test.region(), test.tableName(), test.createTable(), test.pageTokenKey(), test.dynamoCallTimeout(),
          test.dynamoIoThreads(), ProcessSettings.DEFAULT_SHUTDOWN_DRAIN, test.shutdownGrace(), test.hotKeyLogShare());
      this.services = services;
    }

    Instance start() throws IOException {
      recorder = new RecordingInterceptor();
      process = DynamoPlugin.start(config, services, List.of(recorder));
      recorder.clear(); // the start-up's own requests (DescribeTable): only calls count from here on
      return this;
    }

    String address() {
      return "127.0.0.1:" + config.grpcPort();
    }

    /**
     * True once the gateway has sent this instance a call (each call reaches DynamoDB). Not just any
     * request: an inventory-service also serves the order-services' reservations directly and runs its
     * expiry loop, so only a serial item written (PutSerialItem, which comes through the gateway alone)
     * counts for it; an order-service counts its orders' transactions (its recovery finds nothing due).
     */
    boolean served() {
      return recorder.requests().stream().anyMatch(config.serviceName().equals(InventoryMain.SERVICE_NAME)
          ? r -> r instanceof software.amazon.awssdk.services.dynamodb.model.PutItemRequest put
              && put.item().get("PK").s().startsWith("SERIAL#")
          : r -> r instanceof software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest);
    }

    /** Stops the instance as SIGTERM does, starts it again on its port, and waits until the gateway uses it. */
    void restart() throws Exception {
      process.close();
      start();
      await(this::served, config.serviceName() + " on " + address() + " gets calls again after its restart");
    }

    @Override
    public void close() {
      if (process != null) {
        process.close();
      }
    }
  }

  /** A stream of calls by several callers, each call counted as done or failed. */
  private static final class Stream {
    final AtomicBoolean running = new AtomicBoolean(true);
    final AtomicInteger done = new AtomicInteger();
    final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    final List<CompletableFuture<Void>> callers = new ArrayList<>();

    void caller(Runnable loop) {
      callers.add(CompletableFuture.runAsync(() -> {
        while (running.get()) {
          loop.run();
        }
      }, threads));
    }

    /** Runs one call; a failure is recorded with its method and status, and the stream goes on. */
    <T> T call(String method, Supplier<T> call) {
      try {
        T answer = call.get();
        done.incrementAndGet();
        return answer;
      } catch (RuntimeException e) {
        failures.add(method + ": " + Status.fromThrowable(e));
        return null;
      }
    }

    void stop() throws Exception {
      running.set(false);
      CompletableFuture.allOf(callers.toArray(CompletableFuture[]::new)).get(AWAIT.toSeconds(), TimeUnit.SECONDS);
    }
  }

  /** Callers and restarts block: each gets a thread of its own. */
  private static final ExecutorService threads = Executors.newCachedThreadPool();
  private static final List<Instance> inventories = new ArrayList<>();
  private static final List<Instance> orders = new ArrayList<>();
  private static GatewayProcess gateway;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws Exception {
    String table = TestServices.uniqueTableName();
    for (int i = 0; i < 2; i++) {
      inventories.add(new Instance(InventoryMain.SERVICE_NAME, table, InventoryMain::services).start());
    }
    // The order-services hold their orders' stock at both inventory instances, which restart too.
    OrderSettings toInventory = new OrderSettings(inventories.stream().map(Instance::address).toList(),
        ChannelTlsConfig.PLAINTEXT, OrderSettings.DEFAULT_RESOLVE_PERIOD, OrderSettings.DEFAULT_CALL_TIMEOUT,
        OrderSettings.DEFAULT_MIN_CALL_BUDGET, OrderSettings.DEFAULT_CIRCUIT_OPEN, OrderSettings.DEFAULT_STEP_GRACE,
        OrderSettings.DEFAULT_RECOVERY_PERIOD, OrderSettings.DEFAULT_HOLD, OrderSettings.DEFAULT_STEP_BUDGET);
    for (int i = 0; i < 2; i++) {
      orders.add(new Instance(OrderMain.SERVICE_NAME, table, OrderMain.services(toInventory)).start());
    }
    gateway = GatewayProcess.start(new GatewayConfig(0, 0,
        inventories.stream().map(Instance::address).toList(), orders.stream().map(Instance::address).toList(),
        Duration.ofSeconds(10), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET, GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO,
        Duration.ofSeconds(5)));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
    inventoryStub().withDeadlineAfter(30, TimeUnit.SECONDS).putProductInventory(PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder().setProductId(PRODUCT).setWarehouseId("W1").setQuantity(1_000_000))
        .build());
  }

  @AfterAll
  static void stop() {
    if (channel != null) {
      channel.shutdownNow();
    }
    if (gateway != null) {
      gateway.close();
    }
    inventories.forEach(Instance::close);
    orders.forEach(Instance::close);
    threads.shutdownNow();
  }

  private static OrderServiceGrpc.OrderServiceBlockingStub orderStub() {
    return OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static InventoryServiceGrpc.InventoryServiceBlockingStub inventoryStub() {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  /** Places an order, then walks it to DELIVERED: three status changes the gateway never retries. */
  private static void orderLife(Stream stream, String customerId) {
    Order placed = stream.call("PlaceOrder", () -> orderStub().placeOrder(PlaceOrderRequest.newBuilder()
        .setCustomerId(customerId).addLines(OrderLine.newBuilder().setProductId(PRODUCT).setWarehouseId("W1")
            .setQuantity(1).setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(3)))
        .setRequestId("r-" + UUID.randomUUID()).build()));
    if (placed == null) {
      return;
    }
    for (OrderStatus status : List.of(OrderStatus.ORDER_STATUS_PAID, OrderStatus.ORDER_STATUS_SHIPPED,
        OrderStatus.ORDER_STATUS_DELIVERED)) {
      if (stream.call("UpdateOrderStatus", () -> orderStub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder()
          .setOrderId(placed.getOrderId()).setStatus(status).build())) == null) {
        return;
      }
    }
  }

  /** Sets a product's stock and records a serial item: two writes the gateway never retries. */
  private static void inventoryWrites(Stream stream, String productId, AtomicInteger quantity) {
    stream.call("PutProductInventory", () -> inventoryStub().putProductInventory(PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder().setProductId(productId).setWarehouseId("W1")
            .setQuantity(quantity.incrementAndGet())).build()));
    stream.call("PutSerialItem", () -> inventoryStub().putSerialItem(PutSerialItemRequest.newBuilder()
        .setItem(SerialItem.newBuilder().setSerialNumber("SN-" + UUID.randomUUID()).setProductId(productId)
            .setWarehouseId("W1")).build()));
  }

  @Test
  void rollingRestartOfEveryInstance_failsNoCall_evenTheWritesTheGatewayNeverRetries() throws Exception {
    Stream stream = new Stream();
    for (int i = 0; i < CALLERS_PER_SERVICE; i++) {
      String customerId = "C-" + UUID.randomUUID();
      String productId = "P-" + UUID.randomUUID();
      AtomicInteger quantity = new AtomicInteger();
      stream.caller(() -> orderLife(stream, customerId));
      stream.caller(() -> inventoryWrites(stream, productId, quantity));
    }
    try {
      // Both instances of each service are in the gateway's rotation before the first one stops.
      for (Instance instance : concat(inventories, orders)) {
        await(instance::served, instance.config.serviceName() + " on " + instance.address() + " gets calls");
      }
      for (int i = 0; i < 2; i++) {
        int before = stream.done.get();
        CompletableFuture<Void> inventory = restartAsync(inventories.get(i));
        CompletableFuture<Void> order = restartAsync(orders.get(i));
        CompletableFuture.allOf(inventory, order).get(2 * AWAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(stream.done.get()).as("calls made while instance pair " + i + " restarted").isGreaterThan(before);
      }
      int after = stream.done.get();
      await(() -> stream.done.get() > after + 20, "calls go on after the restarts");
    } finally {
      stream.stop();
    }
    assertThat(stream.failures).as("calls failed during the rolling restart (of " + stream.done.get() + " done)")
        .isEmpty();
  }

  private static CompletableFuture<Void> restartAsync(Instance instance) {
    return CompletableFuture.runAsync(() -> {
      try {
        instance.restart();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, threads);
  }

  private static List<Instance> concat(List<Instance> a, List<Instance> b) {
    List<Instance> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  private static void await(Supplier<Boolean> condition, String what) {
    Awaitility.await(what).atMost(AWAIT).pollInterval(Duration.ofMillis(50)).until(condition::get);
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
