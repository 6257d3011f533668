package dev.warehouse.gateway;

import com.google.type.Money;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.order.OrderMain;
import dev.warehouse.order.OrderSettings;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.testing.Retries;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The races of buyers for the last units of one item, through the gateway: the production wiring of the
 * three processes in-process, on a table of their own on the strict launcher (set up as the race needs),
 * and buyers that all start at once.
 */
final class StockRace implements AutoCloseable {

  final ServerProcess inventory;
  final ServerProcess orders;
  final GatewayProcess gateway;
  final ManagedChannel channel;
  private final String table;

  private StockRace(String table, ServerProcess inventory, ServerProcess orders, GatewayProcess gateway) {
    this.table = table;
    this.inventory = inventory;
    this.orders = orders;
    this.gateway = gateway;
    this.channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
  }

  /** The three processes on a new table that {@code launcher} sets up (its conflict rate, its throughput). */
  static StockRace start(Consumer<StrictMoto.TableSettings> launcher) throws Exception {
    String table = TestServices.uniqueTableName();
    StrictMoto.TableSettings settings = StrictMoto.table(table);
    launcher.accept(settings);
    settings.apply();
    ServerProcess inventory = DynamoPlugin.start(TestServices.config(InventoryMain.SERVICE_NAME, table),
        InventoryMain::services, List.of());
    ServerProcess orders = DynamoPlugin.start(TestServices.config(OrderMain.SERVICE_NAME, table),
        OrderMain.services(OrderSettings.plaintext("127.0.0.1:" + inventory.grpcPort())), List.of());
    GatewayProcess gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + inventory.grpcPort()),
        List.of("127.0.0.1:" + orders.grpcPort()), Duration.ofSeconds(10), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
        GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(5)));
    return new StockRace(table, inventory, orders, gateway);
  }

  private InventoryServiceGrpc.InventoryServiceBlockingStub inventoryStub() {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  /** A new product with {@code units} at W1, asked again after ABORTED (the race's table may inject conflicts); its id. */
  String product(long units) {
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    Retries.afterAborted(() -> inventoryStub().putProductInventory(PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(units)).build()));
    return product;
  }

  /** What {@code buyers} buyers of one unit of {@code product} each ended with, all started at once. */
  List<Object> race(String product, int buyers, Buyer buyer) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(buyers);
    List<Object> outcomes = new ArrayList<>();
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Object>> futures = new ArrayList<>();
      for (int i = 0; i < buyers; i++) {
        PlaceOrderRequest request = PlaceOrderRequest.newBuilder().setCustomerId("C-" + i).setRequestId("r-" + UUID.randomUUID())
            .addLines(OrderLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)
                .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(99)))
            .build();
        Callable<Object> one = () -> {
          go.await();
          return buyer.buy(request);
        };
        futures.add(pool.submit(one));
      }
      go.countDown();
      for (Future<Object> future : futures) {
        outcomes.add(future.get(180, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }
    return outcomes;
  }

  /** Spreads the product's stock at W1 over {@code buckets} buckets (W10); the stock as it answers. */
  ProductInventory split(String product, int buckets) {
    return inventoryStub().setStockBuckets(dev.warehouse.inventory.v1.SetStockBucketsRequest.newBuilder().setProductId(product)
        .setWarehouseId("W1").setBucketCount(buckets).build());
  }

  /** The table the race runs on. */
  String table() {
    return table;
  }

  /** The product's stock at W1, read strongly. */
  ProductInventory stockOf(String product) {
    return inventoryStub().getProductInventory(
        GetProductInventoryRequest.newBuilder().setProductId(product).setWarehouseId("W1").setConsistentRead(true).build());
  }

  /**
   * A buyer that honours the throttle and asks again while the outcome is open, always with the same
   * request_id: after RESOURCE_EXHAUSTED it waits what the RetryInfo asks, and after its own deadline
   * (DEADLINE_EXCEEDED: a busy machine's) it asks at once, both for up to two minutes; after ABORTED up to 4
   * more times, however many refusals came between. Every answer other than an order goes to
   * {@code answers}. The flash sale's 200 buyers take about 50 s on a quiet machine (the launcher throttles
   * their bucket keys); a minute of patience ran out under the whole suite's load, and a buyer still being
   * throttled gave up with a unit left for it.
   */
  Buyer patientBuyer(java.util.Queue<io.grpc.StatusRuntimeException> answers) {
    return request -> {
      long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      int aborted = 0;
      while (true) {
        try {
          return dev.warehouse.order.v1.OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
              .placeOrder(request);
        } catch (io.grpc.StatusRuntimeException e) {
          answers.add(e);
          io.grpc.Status.Code code = e.getStatus().getCode();
          boolean patient = System.nanoTime() < giveUp;
          if (code == io.grpc.Status.Code.RESOURCE_EXHAUSTED && patient) {
            Thread.sleep(dev.warehouse.testing.Statuses.retryDelayMs(e));
          } else if (code == io.grpc.Status.Code.DEADLINE_EXCEEDED && patient) {
            continue;
          } else if (code != io.grpc.Status.Code.ABORTED || ++aborted >= 5) {
            return e;
          }
        }
      }
    };
  }

  /**
   * Asserts that every answer a buyer got on the way is a refusal of the race (RESOURCE_EXHAUSTED,
   * FAILED_PRECONDITION or ABORTED) or its own deadline passing, never INTERNAL or UNAVAILABLE, and that
   * each RESOURCE_EXHAUSTED says when to retry (a RetryInfo).
   */
  static void assertThrottlesCarryRetryInfo(java.util.Queue<io.grpc.StatusRuntimeException> answers) {
    org.assertj.core.api.Assertions.assertThat(answers).allSatisfy(answer -> {
      org.assertj.core.api.Assertions.assertThat(answer.getStatus().getCode()).as(String.valueOf(answer))
          .isIn(io.grpc.Status.Code.RESOURCE_EXHAUSTED, io.grpc.Status.Code.FAILED_PRECONDITION, io.grpc.Status.Code.ABORTED,
              io.grpc.Status.Code.DEADLINE_EXCEEDED);
      if (answer.getStatus().getCode() == io.grpc.Status.Code.RESOURCE_EXHAUSTED) {
        org.assertj.core.api.Assertions.assertThat(io.grpc.protobuf.StatusProto.fromThrowable(answer).getDetailsList())
            .as("a RetryInfo in " + answer).anyMatch(detail -> detail.is(com.google.rpc.RetryInfo.class));
      }
    });
  }

  /** One buyer: the order it ended with, or the failure it gave up on. */
  @FunctionalInterface
  interface Buyer {
    Object buy(PlaceOrderRequest request) throws InterruptedException;
  }

  @Override
  public void close() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    for (AutoCloseable process : new AutoCloseable[] {gateway, orders, inventory}) {
      process.close();
    }
    StrictMoto.reset(table);
  }
}
