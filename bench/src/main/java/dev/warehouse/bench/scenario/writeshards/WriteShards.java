package dev.warehouse.bench.scenario.writeshards;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import dev.warehouse.admin.v1.AccessPatternHotKeys;
import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.HotKey;
import dev.warehouse.admin.v1.ListHotKeysRequest;
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
import dev.warehouse.bench.target.Target.Op;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.ListLowStockResponse;
import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.runtime.moto.MotoProcess;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
  static final long POLL_MS = 250;
  static final String MARKER_PREFIX = InventoryKeys.LOW_STOCK.partitionKey().prefix();
  static final String PATTERN = Op.ADJUST_STOCK.patternId();
  private static final Instant LOADED = Instant.parse("2026-11-01T00:00:00Z");

  private WriteShards() {}

  /** One poll during the celebrity workload: what the detector named, and what moto had counted by then. */
  record Observation(double seconds, String detectedKey, double detectedShare, double trueShareOfDetected,
      String trueHottestKey, double trueHottestShare) {

    double error() {
      return Math.abs(detectedShare - trueShareOfDetected);
    }

    /** The detector's hottest is the true hottest (or as hot, within half a point) and its share within {@code tolerance}. */
    boolean right(double tolerance) {
      return (detectedKey.equals(trueHottestKey) || trueHottestShare - trueShareOfDetected <= 0.005) && error() <= tolerance;
    }
  }

  /** What one celebrity run measured. */
  record CelebrityRun(int shards, Summary calls, Map<String, Long> markerWritesByShard, String hottestKey,
      double hottestShare, double hottestMarkerShare, List<Observation> observations) {}

  /** A7 at one shard count, per page. */
  record FanOutCost(int shards, long pages, double queriesPerPage, double examinedPerReturned, double rcuPerPage,
      double itemsPerPage, Summary latency, boolean complete) {}

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
    write(report, runs, costs, settings);
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
        Truth truth = new Truth();
        List<Observation> observations = new CopyOnWriteArrayList<>();
        AtomicLong skewFrom = new AtomicLong(Long.MAX_VALUE);
        ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();
        poller.scheduleAtFixedRate(() -> observe(admin, moto, table, truth, skewFrom.get()).ifPresent(observations::add),
            0, POLL_MS, TimeUnit.MILLISECONDS);
        Summary calls;
        Map<String, Long> atSkew;
        try {
          // No celebrity first: the detector's window fills with uniform traffic, then the skew begins.
          ClosedLoop.run("AdjustStock uniform N=" + shards, adjust, CALLERS, Duration.ZERO, settings.celebrityLead());
          atSkew = merged(moto.keyCounts(table));
          skewFrom.set(System.currentTimeMillis());
          products.set(KeyChooser.zipf(PRODUCTS, ZIPF_S, 11));
          calls = ClosedLoop.run("AdjustStock N=" + shards, adjust, CALLERS, Duration.ZERO, settings.celebrity());
        } finally {
          poller.shutdown();
          poller.awaitTermination(10, TimeUnit.SECONDS);
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
            (double) hottestMarker / total, List.copyOf(observations));
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * moto's counts as they were at each poll, so that a key's true share can be taken over the same
   * window the detector reports on: its current slot and the five before it ({@link HotKeys#WINDOW}).
   */
  static final class Truth {
    private final java.util.NavigableMap<Long, Map<String, Long>> snapshots = new java.util.TreeMap<>();

    synchronized void add(long atMillis, Map<String, Long> counts) {
      snapshots.put(atMillis, counts);
    }

    /** {@code key}'s share of the requests counted in the detector's window at {@code nowMillis}. */
    synchronized double share(String key, long nowMillis) {
      Map<String, Long> inWindow = inWindow(nowMillis);
      long total = inWindow.values().stream().mapToLong(Long::longValue).sum();
      return total == 0 ? 0 : (double) inWindow.getOrDefault(key, 0L) / total;
    }

    /** The key with the most requests in the detector's window at {@code nowMillis}; "" when none. */
    synchronized String hottest(long nowMillis) {
      return inWindow(nowMillis).entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse("");
    }

    private Map<String, Long> inWindow(long nowMillis) {
      Map<String, Long> now = snapshots.floorEntry(nowMillis).getValue();
      long windowStart = (Math.floorDiv(nowMillis, HotKeys.SLOT.toMillis()) - HotKeys.SLOTS + 1) * HotKeys.SLOT.toMillis();
      Map.Entry<Long, Map<String, Long>> before = snapshots.floorEntry(windowStart);
      return before == null ? now : minus(now, before.getValue());
    }
  }

  /**
   * What the detector names now, and the true share of that key over the detector's window (reads and
   * writes: what the service counts); empty before the skew begins.
   */
  private static Optional<Observation> observe(AdminServiceGrpc.AdminServiceBlockingStub admin, MotoProcess moto,
      String table, Truth truth, long skewFrom) {
    try {
      List<AccessPatternHotKeys> patterns = admin.withDeadlineAfter(2, TimeUnit.SECONDS)
          .listHotKeys(ListHotKeysRequest.newBuilder().setPatternId(PATTERN).setLimit(1).build()).getAccessPatternsList();
      long now = System.currentTimeMillis();
      truth.add(now, merged(moto.keyCounts(table)));
      if (now < skewFrom) {
        return Optional.empty();
      }
      Optional<HotKey> top = patterns.stream().flatMap(p -> p.getHotKeysList().stream()).findFirst();
      String key = top.map(HotKey::getPartitionKey).orElse("");
      String hottest = truth.hottest(now);
      return Optional.of(new Observation((now - skewFrom) / 1000.0, key, top.map(HotKey::getShare).orElse(0.0),
          truth.share(key, now), hottest, truth.share(hottest, now)));
    } catch (RuntimeException e) {
      return Optional.empty(); // a poll that failed names nothing; the next one is 250 ms away
    }
  }

  static Map<String, Long> minus(Map<String, Long> later, Map<String, Long> earlier) {
    Map<String, Long> difference = new HashMap<>();
    later.forEach((key, n) -> {
      long d = n - earlier.getOrDefault(key, 0L);
      if (d > 0) {
        difference.put(key, d);
      }
    });
    return difference;
  }

  /** Reads and writes per key: the requests that went to each partition. */
  static Map<String, Long> merged(MotoProcess.KeyCounts counts) {
    Map<String, Long> all = new HashMap<>(counts.reads());
    counts.writes().forEach((key, n) -> all.merge(key, n, Long::sum));
    return all;
  }

  /** The largest shard's share of marker writes; 0 without any. */
  static double largestShare(Map<String, Long> byShard) {
    long total = byShard.values().stream().mapToLong(Long::longValue).sum();
    return total == 0 ? 0 : (double) byShard.values().stream().mapToLong(Long::longValue).max().orElse(0) / total;
  }

  /**
   * When the detector first named {@code key} as its pattern's hottest with a share within
   * {@code tolerance} of the true one over its window; empty if it never did.
   */
  static OptionalDouble firstNamed(List<Observation> observations, String key, double tolerance) {
    return observations.stream().filter(o -> o.detectedKey().equals(key) && o.error() <= tolerance)
        .mapToDouble(Observation::seconds).findFirst();
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
    env.put(InventoryMain.LOW_STOCK_SHARDS, Integer.toString(shards));
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

  // The report

  private static void write(Report report, List<CelebrityRun> runs, List<FanOutCost> costs, Settings settings) {
    double celebrityShare = zipfShare(0);
    report.heading("6. Write shards and hot keys")
        .paragraph("A7 (ListLowStock) reads low-stock markers spread over N write shards (`LOW_STOCK#00` …); every "
            + "stock change moves its record's marker in the same transaction. Each part starts an inventory-service "
            + "with `LOW_STOCK_SHARDS=N` on a table of its own; moto (lenient) counts every request's partition key "
            + "(`--count-keys`), which is the truth the figures are taken from.");

    List<List<String>> spread = new ArrayList<>();
    for (CelebrityRun run : runs) {
      double largest = largestShare(run.markerWritesByShard());
      double target = run.shards() == 1 ? 1.0 : 2.0 / run.shards();
      long markerWrites = run.markerWritesByShard().values().stream().mapToLong(Long::longValue).sum();
      spread.add(List.of(Integer.toString(run.shards()), Long.toString(run.calls().count()),
          num(run.calls().throughput()), Long.toString(run.calls().errorCount()) + errors(run.calls()),
          Long.toString(markerWrites), Integer.toString(run.markerWritesByShard().size()), pct(run.hottestMarkerShare()),
          pct(largest),
          run.shards() == 1 ? "100 % on one key (no sharding)" : "≤ " + pct(target),
          run.shards() == 1 ? (largest == 1.0 ? "yes" : "no") : (largest <= target ? "yes" : "no")));
    }
    report.paragraph("**Celebrity workload.** " + PRODUCTS + " products × " + WAREHOUSES + " warehouses, every record "
            + "within 3 units of its reorder point (" + REORDER_POINT + "); " + CALLERS + " callers send AdjustStock, "
            + "each delta of 1–3 units back towards the reorder point, so most calls put, move or delete a marker. "
            + "For " + settings.celebrityLead().toSeconds() + " s the products are uniform (no celebrity); then for "
            + settings.celebrity().toSeconds() + " s they are Zipf-skewed (s = " + ZIPF_S + ": product C000 takes "
            + pct(celebrityShare) + " of the calls), the warehouse uniform throughout. The figures below are of the "
            + "skewed part. Marker writes are the markers' item writes (a move is a delete and a put in the same "
            + "shard) as moto counted them.")
        .table(List.of("N", "AdjustStock calls", "calls/s", "errors", "marker writes", "shards written",
            "hottest shard's share of all W3 requests", "largest shard's share of marker writes", "target", "met"), spread);

    List<List<String>> detection = new ArrayList<>();
    for (CelebrityRun run : runs) {
      String celebrity = InventoryKeys.productPk(product(0));
      OptionalDouble named = firstNamed(run.observations(), celebrity, SHARE_TOLERANCE);
      Observation last = run.observations().isEmpty() ? new Observation(0, "", 0, 0, "", 0)
          : run.observations().get(run.observations().size() - 1);
      long right = run.observations().stream().filter(o -> o.right(SHARE_TOLERANCE)).count();
      double worst = run.observations().stream().mapToDouble(Observation::error).max().orElse(1);
      boolean celebrityHottest = last.trueHottestKey().equals(celebrity);
      boolean met = right == run.observations().size() && !run.observations().isEmpty()
          && (!celebrityHottest || named.isPresent() && named.getAsDouble() <= DETECT_TARGET_SECONDS);
      detection.add(List.of(Integer.toString(run.shards()),
          "`" + last.trueHottestKey() + "` " + pct(last.trueHottestShare()),
          "`" + last.detectedKey() + "` " + pct(last.detectedShare()),
          named.isPresent() ? num(named.getAsDouble()) + " s"
              : "not the hottest (" + (celebrityHottest ? "missed" : "`" + last.trueHottestKey() + "` is hotter") + ")",
          right + " of " + run.observations().size(), num(worst * 100) + " pp",
          (celebrityHottest ? "named ≤ " + (int) DETECT_TARGET_SECONDS + " s; " : "") + "every poll right, ±"
              + (int) (SHARE_TOLERANCE * 100) + " pp",
          met ? "yes" : "no"));
    }
    report.paragraph("**Hot-key detector** during that workload: every " + POLL_MS + " ms the benchmark asked the "
            + "service's `AdminService/ListHotKeys` for W3's hottest key and moto for its counts. \"Named after\" is "
            + "the time from the start of the skew to the first poll at which the detector's hottest key was the "
            + "celebrity's partition (`PRODUCT#C000`) with a share within ±5 percentage points of its true share. "
            + "True shares are over the detector's own window (the last 50–60 s, which at first still holds the "
            + "uniform traffic): moto's counts at each poll, less its counts when the window began. A poll is right "
            + "when the detector's hottest key is the truly hottest one over that window (or within half a point of "
            + "it) and its share is within ±5 points. "
            + "Shares are of the pattern's requests: W3 reads the stock item and writes it and its request record "
            + "(`PRODUCT#p`), and moves the marker (`LOW_STOCK#ss`).")
        .table(List.of("N", "hottest key of W3 at the end (true share)", "detector's hottest at the end",
            "celebrity named after", "polls right", "largest error", "target", "met"), detection);

    List<List<String>> fanOut = new ArrayList<>();
    for (FanOutCost cost : costs) {
      fanOut.add(List.of(Integer.toString(cost.shards()), Long.toString(cost.pages()), num(cost.itemsPerPage()),
          num(cost.queriesPerPage()), num(cost.examinedPerReturned()), num(cost.rcuPerPage()),
          ms(cost.latency().p50()), ms(cost.latency().p99()), cost.complete() ? "yes" : "no"));
    }
    report.paragraph("**A7's cost per page as N grows**, side by side in one run: the same " + PRODUCTS * WAREHOUSES
            + " records (about a third of them low) at each N, A7 walked page by page (page size " + PAGE + ", "
            + "one caller, eventually consistent) " + settings.lowStockWalks() + " times after one uncounted walk. "
            + "Queries, items examined and RCU are the service's own metrics (pattern A7); latency is the caller's.")
        .table(List.of("N", "pages", "items per page", "Query requests per page", "items examined per item returned",
            "RCU per page (moto)", "p50 (ms)", "p99 (ms)", "every walk complete"), fanOut);

    CelebrityRun one = runs.get(0);
    CelebrityRun many = runs.get(runs.size() - 1);
    FanOutCost least = costs.get(0);
    FanOutCost most = costs.get(costs.size() - 1);
    report.paragraph("What it shows: with one shard every marker write lands on one partition key, `LOW_STOCK#00`, "
            + "which takes " + pct(one.hottestMarkerShare()) + " of W3's requests, as much as the celebrity product's "
            + "own partition (`" + one.hottestKey() + "`, " + pct(one.hottestShare()) + "), and grows with every "
            + "product that hovers near its reorder point, where the celebrity's partition grows with one product's "
            + "traffic only. With " + many.shards() + " shards the largest shard takes "
            + pct(largestShare(many.markerWritesByShard())) + " of the marker writes and "
            + pct(many.hottestMarkerShare()) + " of W3's requests. The shard key is (product, warehouse), so one "
            + "celebrity product spreads over its warehouses' shards; a single celebrity record would still write "
            + "one shard: sharding spreads keys, not one key's traffic. Which shards the celebrity's records fall in is "
            + "fixed by the hash: C000's " + WAREHOUSES + " records take " + shardsOfCelebrity(many.shards()) + " different "
            + "shards here. The price is on the read side: a page costs "
            + num(least.queriesPerPage()) + " Query at N = " + least.shards() + " and " + num(most.queriesPerPage())
            + " at N = " + most.shards() + ", and examines " + num(most.examinedPerReturned()) + " items per item "
            + "returned there (each shard is asked for a page and one more, since any shard may hold the whole "
            + "page), against " + num(least.examinedPerReturned()) + ".")
        .paragraph("Caveats: moto serializes requests, so a page's N queries run one after another here and its "
            + "latency grows with N; DynamoDB runs them in parallel on separate partitions, where latency would "
            + "follow the slowest shard rather than the sum. moto bills a flat 1 RCU per Query whatever it reads; "
            + "DynamoDB bills at least 0.5 RCU per eventually consistent Query (one 4 KB unit, halved), so RCU per "
            + "page grows at least as N / 2 there.")
        .data("write_shards", Map.of(
            "celebrity", runs.stream().map(r -> {
              Map<String, Object> m = new LinkedHashMap<>();
              m.put("shards", r.shards());
              m.put("calls", r.calls().count());
              m.put("errors", r.calls().errors());
              m.put("marker_writes_by_shard", r.markerWritesByShard());
              m.put("largest_shard_share", largestShare(r.markerWritesByShard()));
              m.put("hottest_key", r.hottestKey());
              m.put("hottest_share", r.hottestShare());
              m.put("celebrity_named_after_seconds",
                  firstNamed(r.observations(), InventoryKeys.productPk(product(0)), SHARE_TOLERANCE).orElse(-1));
              m.put("polls", r.observations().size());
              m.put("polls_right", r.observations().stream().filter(o -> o.right(SHARE_TOLERANCE)).count());
              return m;
            }).toList(),
            "fan_out", costs.stream().map(c -> {
              Map<String, Object> m = new LinkedHashMap<>();
              m.put("shards", c.shards());
              m.put("pages", c.pages());
              m.put("queries_per_page", c.queriesPerPage());
              m.put("examined_per_returned", c.examinedPerReturned());
              m.put("rcu_per_page", c.rcuPerPage());
              m.put("p50_ms", c.latency().p50());
              m.put("p99_ms", c.latency().p99());
              return m;
            }).toList()));
  }

  /** How many shards the celebrity's records fall in at {@code shards}. */
  static long shardsOfCelebrity(int shards) {
    LowStockShards layout = LowStockShards.of(shards);
    return java.util.stream.IntStream.range(0, WAREHOUSES).map(w -> layout.shardOf(product(0), warehouse(w))).distinct().count();
  }

  /** The share of Zipf's key {@code k} among {@link #PRODUCTS} keys. */
  static double zipfShare(int k) {
    double sum = 0;
    for (int i = 1; i <= PRODUCTS; i++) {
      sum += 1.0 / Math.pow(i, ZIPF_S);
    }
    return 1.0 / Math.pow(k + 1, ZIPF_S) / sum;
  }

  private static String pct(double share) {
    return String.format(java.util.Locale.ROOT, "%.1f %%", share * 100);
  }

  private static String errors(Summary summary) {
    return summary.errors().isEmpty() ? "" : " " + summary.errors();
  }
}
