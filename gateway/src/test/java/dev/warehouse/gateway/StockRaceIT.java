package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.order.OrderSettings;
import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListStalledOrdersRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.testing.Statuses;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import com.google.type.Money;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The final item is sold exactly once, whatever crashes: N buyers race through the gateway for K < N
 * units of one item, while an instance of each service (two of each run, as jars) is killed with
 * SIGKILL at a random moment of the race and started again on its port. Buyers act as careful clients:
 * an answer that leaves the outcome open is asked again with the same request_id. On the strict
 * launcher, with injected TransactionConflicts. After the recovery has run, exactly K orders are PLACED,
 * the stock holds exactly K units for them, nothing is left owing a step, and both audits are clean.
 */
class StockRaceIT {

  private static final String INVENTORY_JAR = "inventory-service/target/inventory-service.jar";
  private static final String ORDER_JAR = "order-service/target/order-service.jar";
  private static final String GATEWAY_JAR = "gateway/target/gateway.jar";
  private static final int BUYERS = 30;
  private static final int UNITS = 5;

  private static final String table = "race-" + UUID.randomUUID();
  private static final List<StackProcess> inventories = new ArrayList<>();
  private static final List<StackProcess> orders = new ArrayList<>();
  private static final Map<String, String> serviceEnv = new HashMap<>();
  private static final Map<String, String> orderEnv = new HashMap<>();
  private static StackProcess gateway;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws Exception {
    StrictMoto.table(table).conflictRate(0.1).apply();
    // The serialized moto answers in seconds under the race: the 3 s default would time a restart's first call out.
    serviceEnv.putAll(Map.of("DYNAMODB_ENDPOINT", MotoServer.endpoint().toString(), "TABLE_NAME", table,
        "TABLE_AUTO_CREATE", "true", "SHUTDOWN_DRAIN_MS", "0", "SHUTDOWN_GRACE_SECONDS", "2",
        "DYNAMODB_CALL_TIMEOUT_MS", "10000"));
    for (int i = 0; i < 2; i++) {
      inventories.add(StackProcess.service("race-inventory-" + i, INVENTORY_JAR, StackProcess.freePort(),
          StackProcess.freePort(), serviceEnv).startAndAwaitPort());
    }
    orderEnv.putAll(serviceEnv);
    orderEnv.put("INVENTORY_ADDRESSES", String.join(",", inventories.stream().map(p -> "127.0.0.1:" + p.grpcPort).toList()));
    // The recovery takes a PENDING order over 3 s after it was written, and looks every second.
    orderEnv.put("ORDER_STEP_GRACE_SECONDS", "3");
    orderEnv.put("ORDER_RECOVERY_SECONDS", "1");
    orderEnv.put("INVENTORY_CIRCUIT_OPEN_SECONDS", "1");
    for (int i = 0; i < 2; i++) {
      orders.add(StackProcess.service("race-order-" + i, ORDER_JAR, StackProcess.freePort(), StackProcess.freePort(),
          orderEnv).startAndAwaitPort());
    }
    gateway = StackProcess.service("race-gateway", GATEWAY_JAR, StackProcess.freePort(), StackProcess.freePort(), Map.of(
        "AUTH_MODE", "none",
        "INVENTORY_ADDRESSES", String.join(",", inventories.stream().map(p -> "127.0.0.1:" + p.grpcPort).toList()),
        "ORDER_ADDRESSES", String.join(",", orders.stream().map(p -> "127.0.0.1:" + p.grpcPort).toList()),
        "CIRCUIT_OPEN_SECONDS", "1")).startAndAwaitPort();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort).usePlaintext().build();
  }

  @AfterAll
  static void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    List<StackProcess> all = new ArrayList<>(orders);
    all.addAll(inventories);
    all.add(gateway);
    for (StackProcess process : all) {
      if (process != null) {
        process.kill();
      }
    }
    StrictMoto.reset(table);
  }

  private static OrderServiceGrpc.OrderServiceBlockingStub orderStub() {
    return OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static InventoryServiceGrpc.InventoryServiceBlockingStub inventoryStub() {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  /** A buyer: one request, asked again with the same request_id until its outcome is decided (or 60 s). */
  private static Object buy(PlaceOrderRequest request) throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        return orderStub().placeOrder(request);
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        // RESOURCE_EXHAUSTED: a concurrency limit refused the call at once; it asks to be retried after a delay.
        boolean open = code == Status.Code.UNAVAILABLE || code == Status.Code.ABORTED
            || code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.CANCELLED || code == Status.Code.UNKNOWN
            || code == Status.Code.RESOURCE_EXHAUSTED;
        if (!open || System.nanoTime() > giveUp) {
          return e;
        }
        // A client's back-off before it asks again (RetryInfo's delay when it names one), not a wait for the test.
        Thread.sleep(code == Status.Code.RESOURCE_EXHAUSTED ? Statuses.retryDelayMs(e) : 100);
      }
    }
  }

  /** Kills {@code list}'s instance {@code index} (SIGKILL) and starts it again on its ports. */
  private static void killAndRestart(List<StackProcess> list, int index, String jar, Map<String, String> env)
      throws Exception {
    StackProcess dead = list.get(index);
    dead.kill();
    list.set(index, StackProcess.service(dead.name + "-again", jar, dead.grpcPort, dead.metricsPort, env)
        .startAndAwaitPort());
  }

  @Test
  void buyersOfTheLastUnits_getExactlyThatMany_whileInstancesOfBothServicesAreKilled() throws Exception {
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    inventoryStub().putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId("W1").setQuantity(UNITS)).build());

    Random random = new Random();
    ExecutorService pool = Executors.newFixedThreadPool(BUYERS + 1);
    List<PlaceOrderRequest> requests = new ArrayList<>();
    List<Future<Object>> outcomes = new ArrayList<>();
    try {
      CountDownLatch go = new CountDownLatch(1);
      for (int i = 0; i < BUYERS; i++) {
        PlaceOrderRequest request = PlaceOrderRequest.newBuilder().setCustomerId("C-race-" + i)
            .setOrderId("O-" + UUID.randomUUID()).setRequestId("r-" + UUID.randomUUID())
            .addLines(OrderLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)
                .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(99)))
            .build();
        requests.add(request);
        outcomes.add(pool.submit(() -> {
          go.await();
          Thread.sleep(random.nextInt(1500)); // buyers arrive over a second and a half
          return buy(request);
        }));
      }
      Future<?> killer = pool.submit(() -> {
        go.await();
        Thread.sleep(200 + random.nextInt(600)); // the kills land at random moments of the race: a schedule, not a wait
        killAndRestart(orders, random.nextInt(2), ORDER_JAR, orderEnv);
        Thread.sleep(random.nextInt(300));
        killAndRestart(inventories, random.nextInt(2), INVENTORY_JAR, serviceEnv);
        return null;
      });
      go.countDown();
      killer.get(120, TimeUnit.SECONDS);
      for (Future<Object> outcome : outcomes) {
        Object answer = outcome.get(120, TimeUnit.SECONDS);
        if (answer instanceof StatusRuntimeException refused) {
          assertThat(refused.getStatus().getCode()).as(String.valueOf(refused)).isEqualTo(Status.Code.FAILED_PRECONDITION);
        }
      }
    } finally {
      pool.shutdownNow();
    }

    // The recovery finishes whatever a kill left owing a step.
    Awaitility.await("no order owing a step").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
        .until(() -> orderStub().listStalledOrders(ListStalledOrdersRequest.getDefaultInstance()).getOrdersList().isEmpty()
            && requests.stream().noneMatch(r -> status(r) == OrderStatus.ORDER_STATUS_PENDING));
    long placed = requests.stream().filter(r -> status(r) == OrderStatus.ORDER_STATUS_PLACED).count();
    assertThat(placed).as("orders placed for the %d units", UNITS).isEqualTo(UNITS);
    ProductInventory stock = inventoryStub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId("W1").setConsistentRead(true).build());
    assertThat(stock.getReserved()).isEqualTo(UNITS);
    assertThat(stock.getAvailable()).isZero();

    try (DynamoDbAsyncClient dynamo = TestServices.dynamo(table)) {
      AuditReport inventoryAudit = new InventoryAudit(new PacedScan(dynamo, table, "inventory-audit",
          new PacedScan.Options(2, 1000)), LowStockShards.DECLARED).audit();
      AuditReport orderAudit = new OrderAudit(new PacedScan(dynamo, table, "order-audit",
          new PacedScan.Options(2, 1000)), Clock.systemUTC(), OrderSettings.DEFAULT_RECOVERY_PERIOD).audit();
      assertThat(inventoryAudit.findings()).as("inventory audit").isEmpty();
      assertThat(orderAudit.findings()).as("order audit").isEmpty();
    }
  }

  private static OrderStatus status(PlaceOrderRequest request) {
    return orderStub().getOrder(GetOrderRequest.newBuilder().setOrderId(request.getOrderId()).setConsistentRead(true)
        .build()).getStatus();
  }
}
