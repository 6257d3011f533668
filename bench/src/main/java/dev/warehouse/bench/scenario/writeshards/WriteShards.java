package dev.warehouse.bench.scenario.writeshards;

import static dev.warehouse.bench.scenario.writeshards.HotKeySampler.merged;
import static dev.warehouse.bench.scenario.writeshards.HotKeySampler.minus;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.Call;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.scenario.Settings;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Scrape;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.stats.LatencyStats;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.InventorySettings;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.ListLowStockResponse;
import dev.warehouse.runtime.moto.MotoProcess;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Scenario 6: "sharding is not a free fix: it spreads writes by making reads fan out". A7's low-stock
 * markers on N write shards, measured from both sides with the inventory-service started at each N
 * ({@code LOW_STOCK_SHARDS}) on a table of its own, moto counting every request's partition key
 * ({@code --count-keys}):
 * <ol>
 *   <li>the celebrity workload: Zipf-skewed stock adjustments over records hovering around their
 *       reorder points, at N = 1 and N = 16: how the marker writes spread over the shards;
 *   <li>the hot-key detector during that workload: how soon ListHotKeys names the truly hottest key
 *       of W3, and how close its share is to what moto counted;
 *   <li>A7's cost per page at N = 1, 4, 16, 64 over the same records: Query requests, items examined
 *       per item returned, RCU, latency.
 * </ol>
 *
 * <p>This class drives the load and reads A7's cost; {@link HotKeySampler} polls the detector and moto
 * during the celebrity workload, and {@link WriteShardsReport} writes the section.
 */
public final class WriteShards {

  static final int PRODUCTS = 200;
  static final int WAREHOUSES = 8;
  static final double ZIPF_S = 1.2;
  static final long REORDER_POINT = 20;
  static final int CALLERS = 16;
  static final List<Integer> CELEBRITY_SHARDS = List.of(1, 16);
  static final List<Integer> FAN_OUT_SHARDS = List.of(1, 4, 16, 64);
  static final int PAGE = 25;
  static final double SHARE_TOLERANCE = 0.05;
  static final double DETECT_TARGET_SECONDS = 10;
  static final String MARKER_PREFIX = InventoryKeys.LOW_STOCK.partitionKey().prefix();
  private static final Instant LOADED = Instant.parse("2026-11-01T00:00:00Z");

  private WriteShards() {}

  public static void run(Path root, Settings settings, Report report) throws Exception {
    List<CelebrityRun> runs = new ArrayList<>();
    List<FanOutCost> costs = new ArrayList<>();
    try (MotoProcess moto = Stack.startMoto(root, "--count-keys");
        DynamoDbAsyncClient dynamo = Stack.client(moto.endpoint())) {
      for (int shards : CELEBRITY_SHARDS) {
        runs.add(celebrity(root, moto, dynamo, shards, settings));
      }
      for (int shards : FAN_OUT_SHARDS) {
        costs.add(fanOut(root, moto, dynamo, shards, settings.lowStockWalks()));
      }
    }
    WriteShardsReport.write(report, runs, costs, settings);
  }

  // The celebrity workload

  private static CelebrityRun celebrity(Path root, MotoProcess moto, DynamoDbAsyncClient dynamo, int shards,
      Settings settings) throws Exception {
    String table = table("celebrity", shards);
    try (Proc inventory = inventory(root, moto, table, shards)) {
      long[] start = new long[PRODUCTS * WAREHOUSES];
      SplittableRandom random = new SplittableRandom(7);
      for (int r = 0; r < start.length; r++) {
        start[r] = REORDER_POINT - 3 + random.nextInt(7); // within 3 of the reorder point
      }
      seed(dynamo, table, LowStockShards.of(shards), start);
      AtomicLongArray known = new AtomicLongArray(start);
      ManagedChannel channel = channel(inventory.grpcPort);
      try {
        InventoryServiceGrpc.InventoryServiceStub stub = InventoryServiceGrpc.newStub(channel);
        AdminServiceGrpc.AdminServiceBlockingStub admin = AdminServiceGrpc.newBlockingStub(channel);
        AtomicReference<KeyChooser> products = new AtomicReference<>(KeyChooser.uniform(PRODUCTS, 17));
        KeyChooser warehouses = KeyChooser.uniform(WAREHOUSES, 13);
        Call adjust = i -> {
          int record = products.get().next() * WAREHOUSES + warehouses.next();
          long step = 1 + (i % 3);
          long delta = known.get(record) > REORDER_POINT ? -step : step; // back towards the reorder point
          AdjustStockRequest request = AdjustStockRequest.newBuilder().setProductId(product(record / WAREHOUSES))
              .setWarehouseId(warehouse(record % WAREHOUSES)).setDelta(delta).setRequestId(UUID.randomUUID().toString()).build();
          return GrpcTarget.<dev.warehouse.inventory.v1.ProductInventory>unary(
                  o -> stub.withDeadlineAfter(10, TimeUnit.SECONDS).adjustStock(request, o))
              .thenAccept(after -> known.set(record, after.getQuantity()));
        };

        moto.resetKeyCounts(table);
        HotKeySampler detector = HotKeySampler.start(admin, moto, table);
        Summary calls;
        Map<String, Long> atSkew;
        try {
          // No celebrity first: the detector's window fills with uniform traffic, then the skew begins.
          ClosedLoop.run("AdjustStock uniform N=" + shards, adjust, CALLERS, Duration.ZERO, settings.celebrityLead());
          atSkew = merged(moto.keyCounts(table));
          detector.skewBegins();
          products.set(KeyChooser.zipf(PRODUCTS, ZIPF_S, 11));
          calls = ClosedLoop.run("AdjustStock N=" + shards, adjust, CALLERS, Duration.ZERO, settings.celebrity());
        } finally {
          detector.stop();
        }
        Map<String, Long> skewed = minus(merged(moto.keyCounts(table)), atSkew);
        Map.Entry<String, Long> hottest = skewed.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow();
        long total = skewed.values().stream().mapToLong(Long::longValue).sum();
        Map<String, Long> markers = new java.util.TreeMap<>();
        skewed.forEach((key, n) -> {
          if (key.startsWith(MARKER_PREFIX)) {
            markers.put(key, n); // markers are only written: their reads and writes are their writes
          }
        });
        long hottestMarker = markers.values().stream().mapToLong(Long::longValue).max().orElse(0);
        return new CelebrityRun(shards, calls, markers, hottest.getKey(), (double) hottest.getValue() / total,
            (double) hottestMarker / total, detector.observations());
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  // A7's cost as N grows

  private static FanOutCost fanOut(Path root, MotoProcess moto, DynamoDbAsyncClient dynamo, int shards, int walks)
      throws Exception {
    String table = table("fanout", shards);
    try (Proc inventory = inventory(root, moto, table, shards)) {
      long[] quantities = new long[PRODUCTS * WAREHOUSES];
      long low = 0;
      for (int r = 0; r < quantities.length; r++) {
        quantities[r] = (r * 7919L) % 60; // the same records at every N; about a third at or below 20
        low += quantities[r] <= REORDER_POINT ? 1 : 0;
      }
      seed(dynamo, table, LowStockShards.of(shards), quantities);
      ManagedChannel channel = channel(inventory.grpcPort);
      try {
        InventoryServiceGrpc.InventoryServiceBlockingStub stub = InventoryServiceGrpc.newBlockingStub(channel);
        walk(stub, new LatencyStats("warm-up")); // not counted: the JVM's first pages
        String before = Scrape.text(inventory.metricsPort);
        LatencyStats latency = new LatencyStats("A7 N=" + shards);
        long pages = 0;
        long items = 0;
        boolean complete = true;
        long started = System.nanoTime();
        for (int w = 0; w < walks; w++) {
          long[] walked = walk(stub, latency);
          pages += walked[0];
          items += walked[1];
          complete &= walked[1] == low;
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        String after = Scrape.text(inventory.metricsPort);
        double queries = delta(before, after, "dynamodb_client_request_duration_seconds_count");
        double examined = delta(before, after, "dynamodb_items_examined_total");
        double units = delta(before, after, "dynamodb_consumed_capacity_units_total");
        return new FanOutCost(shards, pages, queries / pages, examined / items, units / pages, (double) items / pages,
            latency.summary(seconds), complete);
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  /** Every page of A7 once, one after another; returns {pages, items}. */
  private static long[] walk(InventoryServiceGrpc.InventoryServiceBlockingStub stub, LatencyStats latency) {
    String token = "";
    long pages = 0;
    long items = 0;
    do {
      long start = System.nanoTime();
      ListLowStockResponse page = stub.withDeadlineAfter(30, TimeUnit.SECONDS)
          .listLowStock(ListLowStockRequest.newBuilder().setPageSize(PAGE).setPageToken(token).build());
      latency.success(System.nanoTime() - start);
      pages++;
      items += page.getInventoriesCount();
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return new long[] {pages, items};
  }

  private static double delta(String before, String after, String metric) {
    String a7 = "pattern=\"A7\"";
    return Scrape.sum(after, metric, a7) - Scrape.sum(before, metric, a7);
  }

  // Shared

  private static Proc inventory(Path root, MotoProcess moto, String table, int shards) throws Exception {
    Map<String, String> env = new HashMap<>(Stack.serviceEnv(moto.endpoint(), table));
    env.put(InventorySettings.LOW_STOCK_SHARDS, Integer.toString(shards));
    Proc inventory = Stack.java(root, root.resolve("target/bench-logs"), "inventory-service", env);
    try {
      inventory.awaitServing(120_000);
    } catch (Exception e) {
      inventory.close();
      throw e;
    }
    return inventory;
  }

  /** The stock records (record r: product r / WAREHOUSES at warehouse r % WAREHOUSES) and the markers of the low ones. */
  private static void seed(DynamoDbAsyncClient dynamo, String table, LowStockShards shards, long[] quantities)
      throws InterruptedException {
    List<Map<String, AttributeValue>> items = new ArrayList<>();
    for (int r = 0; r < quantities.length; r++) {
      ProductInventory stock = new ProductInventory(product(r / WAREHOUSES), warehouse(r % WAREHOUSES), quantities[r],
          REORDER_POINT, LOADED);
      items.add(InventoryItems.toItem(stock));
      if (stock.low()) {
        items.add(InventoryItems.lowStockMarker(shards, stock));
      }
    }
    DataSet.putAll(dynamo, table, items);
  }

  /** Product 0 is the celebrity: Zipf's hottest key. */
  static String product(int index) {
    return String.format(java.util.Locale.ROOT, "C%03d", index);
  }

  static String warehouse(int index) {
    return "W" + index;
  }

  private static String table(String kind, int shards) {
    return "bench-" + kind + "-" + shards + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static ManagedChannel channel(int port) {
    return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
  }
}
