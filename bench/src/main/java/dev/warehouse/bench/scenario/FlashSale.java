package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import com.google.type.Money;
import dev.warehouse.bench.load.Call;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.Scrape;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.ReservationLine;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.inventory.v1.ReserveStockRequest;
import dev.warehouse.inventory.v1.SetStockBucketsRequest;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 11: a flash sale, one product bought at once by many, held in 1, 4 and 16 buckets (W10), on
 * the strict launcher throttling each partition key as DynamoDB does, its limits scaled down until one
 * bucket, not moto, is the bottleneck: {@value #WRITE_UNITS} write units a second per key is one hold a
 * second per bucket (a hold writes its bucket in a transaction: 2 units), where DynamoDB's 1,000 are 500.
 * Only the product's keys ({@code PRODUCT#}) are held to them: every other key of a sale (an order, a
 * customer, a reservation) is one buyer's, far from any limit, as in DynamoDB.
 *
 * <ul>
 *   <li>Holds per second: ReserveStock straight to the inventory, one unit each, {@value #HOLDERS} callers in a
 *       closed loop, on stock that does not run out; with the throttled attempts a second.
 *   <li>The sale: as many buyers as units ({@value #UNITS_PER_BUCKET} a bucket), all at once through the
 *       gateway, each honouring RetryInfo: orders placed, units oversold, orders refused (every refusal is
 *       one while stock was available: there is a unit for each buyer), and PlaceOrder p50/p99 to the
 *       final answer.
 * </ul>
 */
public final class FlashSale {

  static final List<Integer> BUCKETS = List.of(1, 4, 16);
  static final int WRITE_UNITS = 2;
  /** Reads are not what this measures: a bucket's 40 cover its holds and a snapshot of all 16 at once. */
  static final int READ_UNITS = 40;
  static final int HOLDERS = 32;
  static final int UNITS_PER_BUCKET = 6;
  /** Long enough for the moves into new buckets (one transaction) before the load starts. */
  static final long SETTLE_MS = 3000;

  private FlashSale() {}

  public static void run(Path root, Settings settings, Report report) throws Exception {
    report.heading("11. A flash sale");
    List<List<String>> rows = new ArrayList<>();
    Map<String, Object> data = new LinkedHashMap<>();
    try (Stack stack = Stack.startStrict(root, "bench-" + UUID.randomUUID(), "--partition-write-units",
        Integer.toString(WRITE_UNITS), "--partition-read-units", Integer.toString(READ_UNITS), "--burst-seconds", "1",
        "--throttled-key-prefix", "PRODUCT#", "--stale-read-probability", "0")) {
      ManagedChannel inventory = channel(stack.inventory.grpcPort);
      ManagedChannel gateway = channel(stack.gateway.grpcPort);
      try {
        for (int buckets : BUCKETS) {
          Holds measured = holds(stack, inventory, buckets, settings);
          Summary holds = measured.summary();
          double throttled = measured.throttledPerSecond();
          Sale sale = sale(inventory, gateway, buckets);
          rows.add(List.of(Integer.toString(buckets), num(holds.throughput()), num(throttled),
              Long.toString(holds.errorCount()), Integer.toString(sale.units()), Integer.toString(sale.placed()),
              Integer.toString(sale.oversold()), Integer.toString(sale.refused()), ms(sale.p50()), ms(sale.p99())));
          data.put("buckets_" + buckets, Map.of("holds_per_second", holds.throughput(), "throttled_per_second", throttled,
              "placed", sale.placed(), "oversold", sale.oversold(), "refused", sale.refused(),
              "place_p50_ms", sale.p50(), "place_p99_ms", sale.p99()));
        }
      } finally {
        inventory.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        gateway.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    double one = ((Map<?, ?>) data.get("buckets_1")).get("holds_per_second") instanceof Double d ? d : 0;
    double sixteen = ((Map<?, ?>) data.get("buckets_16")).get("holds_per_second") instanceof Double d ? d : 0;
    data.put("ratio_16_to_1", one == 0 ? 0 : sixteen / one);
    report.paragraph("On the strict launcher with per-key limits of " + WRITE_UNITS + " write and " + READ_UNITS
        + " read units a second on the product's keys (DynamoDB's are 1,000 and 3,000: scaled down 500 times, so that "
        + "a bucket, not moto, is what runs out; every other key is one buyer's and keeps no limit), one product held "
        + "in 1, 4 and 16 buckets. Holds: ReserveStock straight to the "
        + "inventory, " + HOLDERS + " callers in a closed loop. The sale: " + UNITS_PER_BUCKET + " units a bucket "
        + "and as many buyers, all at once through the gateway, each honouring RetryInfo; a refusal counts when it "
        + "is a buyer's final answer, and every one is a refusal while stock was available.")
        .table(List.of("buckets", "holds/s", "throttled attempts/s", "hold errors", "units", "orders placed",
            "units oversold", "orders refused", "PlaceOrder p50 ms", "p99 ms"), rows)
        .paragraph("16 buckets against 1: **" + num(one == 0 ? 0 : sixteen / one) + "×** the holds a second "
            + "(target: at least 10×).")
        .data("flash_sale", data);
  }

  /** A closed loop of holds, and the throttled attempts a second meanwhile. */
  private record Holds(Summary summary, double throttledPerSecond) {}

  /** Holds of one unit each on a product of {@code buckets} buckets that never runs out, closed loop. */
  private static Holds holds(Stack stack, ManagedChannel channel, int buckets, Settings settings) throws Exception {
    String product = stocked(channel, "HOLD-" + buckets, 1_000_000_000L, buckets);
    ReservationServiceGrpc.ReservationServiceStub reservations = ReservationServiceGrpc.newStub(channel);
    Call hold = i -> GrpcTarget.<dev.warehouse.inventory.v1.Reservation>unary(o -> reservations
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .reserveStock(ReserveStockRequest.newBuilder().setOrderId("F-" + UUID.randomUUID())
            .addLines(ReservationLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)).build(), o));
    double before = throttled(stack);
    long started = System.nanoTime();
    Summary s = ClosedLoop.run("flash sale holds, " + buckets + " buckets", hold, HOLDERS, settings.warmup(),
        settings.overloadMeasure());
    return new Holds(s, (throttled(stack) - before) / ((System.nanoTime() - started) / 1e9));
  }

  /** A sale's outcome. */
  private record Sale(int units, int placed, int oversold, int refused, double p50, double p99) {}

  /** As many buyers as units, at once, through the gateway, each honouring RetryInfo until its final answer. */
  private static Sale sale(ManagedChannel inventory, ManagedChannel gateway, int buckets) throws Exception {
    int units = UNITS_PER_BUCKET * buckets;
    String product = stocked(inventory, "SALE-" + buckets, units, buckets);
    ExecutorService pool = Executors.newFixedThreadPool(units);
    List<Long> micros = Collections.synchronizedList(new ArrayList<>());
    AtomicLong placed = new AtomicLong();
    AtomicLong refused = new AtomicLong();
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> buyers = new ArrayList<>();
      for (int i = 0; i < units; i++) {
        PlaceOrderRequest request = PlaceOrderRequest.newBuilder().setCustomerId("C-" + i).setRequestId("r-" + UUID.randomUUID())
            .addLines(OrderLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)
                .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(10)))
            .build();
        buyers.add(pool.submit(() -> {
          go.await();
          long start = System.nanoTime();
          boolean ok = buy(gateway, request);
          micros.add((System.nanoTime() - start) / 1000);
          (ok ? placed : refused).incrementAndGet();
          return null;
        }));
      }
      go.countDown();
      for (Future<?> buyer : buyers) {
        buyer.get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    long reserved = patiently(() -> InventoryServiceGrpc.newBlockingStub(inventory).withDeadlineAfter(30, TimeUnit.SECONDS)
        .getProductInventory(GetProductInventoryRequest.newBuilder().setProductId(product).setWarehouseId("W1")
            .setConsistentRead(true).build())).getReserved();
    List<Long> sorted = new ArrayList<>(micros);
    Collections.sort(sorted);
    return new Sale(units, (int) placed.get(), (int) Math.max(0, reserved - units), (int) refused.get(),
        percentile(sorted, 0.50) / 1000.0, percentile(sorted, 0.99) / 1000.0);
  }

  /** Places one order, patiently: whether it was placed (false: its final answer was a refusal). */
  private static boolean buy(ManagedChannel gateway, PlaceOrderRequest request) throws InterruptedException {
    try {
      patiently(() -> OrderServiceGrpc.newBlockingStub(gateway).withDeadlineAfter(30, TimeUnit.SECONDS).placeOrder(request));
      return true;
    } catch (StatusRuntimeException refused) {
      return false;
    }
  }

  /**
   * {@code call}'s answer, asked again with the same request after each RESOURCE_EXHAUSTED, ABORTED or
   * UNAVAILABLE, once the RetryInfo's delay has passed (100 ms without one), for up to two minutes.
   */
  private static <T> T patiently(java.util.function.Supplier<T> call) throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (true) {
      try {
        return call.get();
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        boolean again = code == Status.Code.RESOURCE_EXHAUSTED || code == Status.Code.ABORTED
            || code == Status.Code.UNAVAILABLE;
        if (!again || System.nanoTime() > giveUp) {
          throw e;
        }
        Thread.sleep(GrpcErrors.retryDelay(e).map(java.time.Duration::toMillis).orElse(100L));
      }
    }
  }

  private static long percentile(List<Long> sorted, double q) {
    return sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
  }

  /** A product with {@code units} at W1 over {@code buckets} buckets, its units moved in; its id. */
  private static String stocked(ManagedChannel channel, String name, long units, int buckets) throws InterruptedException {
    String product = name + "-" + UUID.randomUUID().toString().substring(0, 8);
    InventoryServiceGrpc.InventoryServiceBlockingStub stub = InventoryServiceGrpc.newBlockingStub(channel);
    patiently(() -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).putProductInventory(PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(units)).build()));
    if (buckets > 1) {
      patiently(() -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).setStockBuckets(SetStockBucketsRequest.newBuilder()
          .setProductId(product).setWarehouseId("W1").setBucketCount(buckets).build()));
      Thread.sleep(SETTLE_MS);
    }
    return product;
  }

  private static double throttled(Stack stack) {
    return Scrape.sumWhere(Scrape.text(stack.inventory.metricsPort), "dynamodb_client_request_duration_seconds_count",
        "outcome=\"throttled\"");
  }

  private static ManagedChannel channel(int port) {
    return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
  }
}
