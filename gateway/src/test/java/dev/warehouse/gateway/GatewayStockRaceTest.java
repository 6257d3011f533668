package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.type.Money;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.order.OrderMain;
import dev.warehouse.order.OrderSettings;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.testing.Statuses;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Forty buyers race through the gateway for the last K units of one item, K = 5 and K = 1: exactly K
 * orders are placed, the others are OUT_OF_STOCK, and the stock holds exactly K. The services run the
 * production wiring in-process, on the strict launcher with injected TransactionConflicts; buyers ask
 * again with the same request_id when an answer leaves the outcome open, as a careful client does. The
 * stack is cold (its limits at their first value, 20) and no buyer is refused for load: the burst waits
 * for slots. ({@code StockRaceIT} runs the same race against the jars while it kills instances.)
 */
@Tag("integration")
class GatewayStockRaceTest {

  private static final int BUYERS = 40;

  private static ServerProcess inventory;
  private static ServerProcess orders;
  private static GatewayProcess gateway;
  private static ManagedChannel channel;
  private static String table;
  /** Every OVERLOADED refusal any buyer was answered, retried or not. */
  private static final AtomicInteger overloaded = new AtomicInteger();

  @BeforeAll
  static void start() throws Exception {
    table = TestServices.uniqueTableName();
    StrictMoto.table(table).conflictRate(0.2).apply();
    inventory = DynamoPlugin.start(TestServices.config(InventoryMain.SERVICE_NAME, table), InventoryMain::services,
        List.of());
    orders = DynamoPlugin.start(TestServices.config(OrderMain.SERVICE_NAME, table),
        OrderMain.services(OrderSettings.plaintext("127.0.0.1:" + inventory.grpcPort())), List.of());
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + inventory.grpcPort()),
        List.of("127.0.0.1:" + orders.grpcPort()), Duration.ofSeconds(10), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
        GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(5)));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
  }

  @AfterAll
  static void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    for (AutoCloseable process : new AutoCloseable[] {gateway, orders, inventory}) {
      if (process != null) {
        process.close();
      }
    }
    StrictMoto.reset(table);
  }

  /**
   * One buyer: asked again with the same request_id while the answer leaves the outcome open, and after
   * the delay a refusal names when a concurrency limit refused it (RESOURCE_EXHAUSTED, OVERLOADED).
   */
  private static Object buy(PlaceOrderRequest request) throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (int attempt = 1; ; attempt++) {
      try {
        return OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).placeOrder(request);
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        if (Statuses.reason(e).equals("OVERLOADED")) {
          overloaded.incrementAndGet();
        }
        if (code == Status.Code.RESOURCE_EXHAUSTED && System.nanoTime() < giveUp) {
          Thread.sleep(Statuses.retryDelayMs(e)); // the back-off RetryInfo asks of a client, not a wait for the test
          continue;
        }
        boolean open = code == Status.Code.ABORTED || code == Status.Code.UNAVAILABLE
            || code == Status.Code.DEADLINE_EXCEEDED;
        if (!open || attempt >= 5) {
          return e;
        }
      }
    }
  }

  @ParameterizedTest(name = "K = {0}")
  @ValueSource(ints = {5, 1})
  void fortyBuyers_forTheLastKUnits_throughTheGateway_placeExactlyKOrders(int units) throws Exception {
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    InventoryServiceGrpc.InventoryServiceBlockingStub inventoryStub =
        InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    inventoryStub.putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId("W1").setQuantity(units)).build());

    ExecutorService pool = Executors.newFixedThreadPool(BUYERS);
    List<Object> outcomes = new ArrayList<>();
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Object>> futures = new ArrayList<>();
      for (int i = 0; i < BUYERS; i++) {
        PlaceOrderRequest request = PlaceOrderRequest.newBuilder().setCustomerId("C-" + i).setRequestId("r-" + UUID.randomUUID())
            .addLines(OrderLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)
                .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(99)))
            .build();
        futures.add(pool.submit(() -> {
          go.await();
          return buy(request);
        }));
      }
      go.countDown();
      for (Future<Object> future : futures) {
        outcomes.add(future.get(120, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(overloaded).as("buyers refused for load: a burst of %d waits for slots", BUYERS).hasValue(0);
    assertThat(outcomes).filteredOn(o -> o instanceof Order).hasSize(units)
        .allSatisfy(o -> assertThat(((Order) o).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED));
    assertThat(outcomes).filteredOn(o -> !(o instanceof Order)).hasSize(BUYERS - units).allSatisfy(o ->
        assertThat(Status.fromThrowable((Throwable) o).getCode()).as(String.valueOf(o)).isEqualTo(Status.Code.FAILED_PRECONDITION));
    ProductInventory stock = inventoryStub.withDeadlineAfter(10, TimeUnit.SECONDS).getProductInventory(
        GetProductInventoryRequest.newBuilder().setProductId(product).setWarehouseId("W1").setConsistentRead(true).build());
    assertThat(stock.getReserved()).isEqualTo(units);
    assertThat(stock.getAvailable()).isZero();
  }
}
