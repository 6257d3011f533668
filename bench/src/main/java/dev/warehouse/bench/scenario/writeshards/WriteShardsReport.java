package dev.warehouse.bench.scenario.writeshards;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;
import static dev.warehouse.bench.scenario.writeshards.HotKeySampler.POLL_MS;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.CALLERS;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.DETECT_TARGET_SECONDS;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.PAGE;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.PRODUCTS;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.REORDER_POINT;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.SHARE_TOLERANCE;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.WAREHOUSES;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.ZIPF_S;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.product;
import static dev.warehouse.bench.scenario.writeshards.WriteShards.warehouse;

import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.scenario.Settings;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.stream.IntStream;

/**
 * Scenario 6's section of the report, from what {@link WriteShards} measured: a table for each part (the
 * spread of marker writes, the detector's polls, A7's cost per page), what they show, and the
 * {@code write_shards} entry of the JSON.
 */
final class WriteShardsReport {

  private WriteShardsReport() {}

  static void write(Report report, List<CelebrityRun> runs, List<FanOutCost> costs, Settings settings) {
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

  /** How many shards the celebrity's records fall in at {@code shards}. */
  static long shardsOfCelebrity(int shards) {
    LowStockShards layout = LowStockShards.of(shards);
    return IntStream.range(0, WAREHOUSES).map(w -> layout.shardOf(product(0), warehouse(w))).distinct().count();
  }

  /** The share of Zipf's key {@code k} among {@link WriteShards#PRODUCTS} keys. */
  static double zipfShare(int k) {
    double sum = 0;
    for (int i = 1; i <= PRODUCTS; i++) {
      sum += 1.0 / Math.pow(i, ZIPF_S);
    }
    return 1.0 / Math.pow(k + 1, ZIPF_S) / sum;
  }

  private static String pct(double share) {
    return String.format(Locale.ROOT, "%.1f %%", share * 100);
  }

  private static String errors(Summary summary) {
    return summary.errors().isEmpty() ? "" : " " + summary.errors();
  }
}
