package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.num;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.data.ItemSize;
import dev.warehouse.bench.report.Markers;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Scrape;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.Target.Op;
import dev.warehouse.runtime.dynamo.SingleTable;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Scenario 8: what one call of each RPC consumes in DynamoDB capacity, and what that costs a month on
 * demand. Each RPC is called a known number of times through the service, one call after another; the
 * services' {@code dynamodb_consumed_capacity_units_total} (labelled by access pattern and kind) is
 * scraped before and after. The launcher reports capacity by DynamoDB's documented rules (item sizes,
 * 4 KB reads, 1 KB writes, transactions twice, index writes), so the figures are DynamoDB's, not moto's.
 */
public final class CapacityCost {

  /** US East (N. Virginia), Standard table class, on-demand: USD per million read request units. */
  // Source: the AWS page "Amazon DynamoDB pricing for on-demand capacity"; the prices since the on-demand
  // reduction of 1 November 2024 (half the earlier 0.25 and 1.25).
  static final double USD_PER_MILLION_READ_UNITS = 0.125;
  /** Likewise, USD per million write request units. */
  static final double USD_PER_MILLION_WRITE_UNITS = 0.625;
  static final String PRICES_EFFECTIVE = "2024-11-01";
  static final String PRICES_CHECKED = "2026-12-03";
  static final String PRICE_REGION = "us-east-1";

  /** Calls per second the monthly cost is given at. */
  static final List<Integer> RATES = List.of(10, 100, 1_000);
  static final long SECONDS_PER_MONTH = 30L * 24 * 3600;

  private static final String CAPACITY = "dynamodb_consumed_capacity_units_total";
  private static final String REQUESTS = "dynamodb_client_request_duration_seconds_count";
  private static final String EXAMINED = "dynamodb_items_examined_total";
  private static final String NO_ROUTE = "pattern=\"none\"";
  private static final List<String> OPERATIONS = List.of("GetItem", "Query", "PutItem", "UpdateItem", "DeleteItem",
      "TransactWriteItems", "TransactGetItems", "BatchGetItem", "BatchWriteItem", "Scan");

  public static final String BEGIN = "<!-- capacity:begin -->";
  public static final String END = "<!-- capacity:end -->";
  /** What the tool writes when docs/operations.md does not exist yet. */
  static final String SKELETON = "# Operations\n\n## Capacity and cost\n\n" + BEGIN + "\n" + END + "\n";

  /** The RPCs, in the order they are called (the order {@link Op} declares them in). */
  private static final List<Op> ORDER = List.of(Op.values());

  private CapacityCost() {}

  /** Per call of one RPC: DynamoDB requests, read and write capacity units (request units on demand). */
  public record PerCall(String pattern, String method, int calls, int failed, String requests, double itemsQueried,
      double readUnits,
      double writeUnits) {

    /** USD a 30-day month at {@code callsPerSecond}. */
    double monthlyUsd(double callsPerSecond) {
      double calls = callsPerSecond * SECONDS_PER_MONTH;
      return calls * (readUnits * USD_PER_MILLION_READ_UNITS + writeUnits * USD_PER_MILLION_WRITE_UNITS) / 1e6;
    }
  }

  public static void run(Stack stack, DataSet data, Settings settings, Report report, Path operationsDoc) throws Exception {
    int calls = settings.capacityCalls();
    List<PerCall> measured = new ArrayList<>();
    try (GrpcTarget services = new GrpcTarget("services", "127.0.0.1:" + stack.inventory.grpcPort,
        "127.0.0.1:" + stack.orders.grpcPort, data)) {
      for (Op op : ORDER) {
        String before = scrape(stack);
        var call = services.call(op, i -> (int) i);
        int failed = 0;
        for (int i = 0; i < calls; i++) {
          try {
            call.start(i).join();
          } catch (RuntimeException e) {
            failed++;
          }
        }
        String after = scrape(stack);
        // Everything the services asked of DynamoDB meanwhile, whatever route it was counted under (W5 reads its
        // order through A6's), but their own requests that name no route (start-up, audits).
        measured.add(new PerCall(op.patternId(), op.method(), calls, failed,
            requests(before, after, calls),
            delta(before, after, EXAMINED, "") / calls,
            delta(before, after, CAPACITY, "kind=\"read\"") / calls,
            delta(before, after, CAPACITY, "kind=\"write\"") / calls));
      }
    }
    measured.sort((a, b) -> Integer.compare(rank(a.pattern()), rank(b.pattern())));

    Map<String, Integer> sizes = new LinkedHashMap<>();
    data.samples().forEach((kind, item) -> sizes.put(kind, ItemSize.of(item)));
    String table = table(measured);
    String sizesLine = "Item sizes behind them (attribute names and values, as DynamoDB counts them): "
        + String.join(", ", sizes.entrySet().stream().map(e -> e.getKey() + " " + e.getValue() + " B").toList())
        + (sizes.values().stream().allMatch(b -> b < 1024)
            ? "; every one under 1 KB, so each item read costs the least a read can, and each item written one unit." : ".");
    int failures = measured.stream().mapToInt(PerCall::failed).sum();

    report.heading("8. Capacity and cost per call")
        .paragraph("Each RPC called " + calls + " times, one call after another, directly on its service (the gateway "
            + "adds no DynamoDB request), on the " + data.items() + "-item data set; the services' "
            + "`dynamodb_consumed_capacity_units_total` (per access pattern, `kind` read or write) and the count of "
            + "their DynamoDB requests scraped before and after, divided by the calls. moto runs through our launcher, "
            + "which reports ConsumedCapacity by DynamoDB's documented rules from the items' sizes (moto's own "
            + "figures are flat: 0.5 per GetItem, 1 per Query, none for a transaction). " + pricesSentence()
            + (failures > 0 ? " **" + failures + " calls failed**: their attempts are counted too." : ""))
        .paragraph(table)
        .paragraph(sizesLine)
        .paragraph(reading())
        .data("capacity_per_call", measured)
        .data("capacity_prices", Map.of("region", PRICE_REGION, "usd_per_million_read_request_units", USD_PER_MILLION_READ_UNITS,
            "usd_per_million_write_request_units", USD_PER_MILLION_WRITE_UNITS, "effective", PRICES_EFFECTIVE,
            "checked", PRICES_CHECKED))
        .data("item_sizes_bytes", sizes);

    String section = "Measured on " + Instant.now().toString().substring(0, 10) + " by the benchmark tool "
        + "(`./bench.sh --only 8`; written here between the markers, by the tool): each RPC called " + calls
        + " times on its service against moto through our launcher, which reports consumed capacity as DynamoDB "
        + "documents it. " + pricesSentence() + "\n\n" + table + "\n" + sizesLine + "\n\n" + reading() + "\n";
    Markers.write(operationsDoc, SKELETON, BEGIN, END, section);
  }

  static String table(List<PerCall> measured) {
    StringBuilder md = new StringBuilder(
        "| ID | RPC | DynamoDB requests per call | Items its queries read | RCU (RRU) per call | WCU (WRU) per call |");
    RATES.forEach(r -> md.append(" USD a month at ").append(String.format(Locale.ROOT, "%,d", r)).append(" calls/s |"));
    md.append("\n|---|---|---|---|---|---|");
    RATES.forEach(r -> md.append("---|"));
    md.append('\n');
    for (PerCall c : measured) {
      md.append("| ").append(c.pattern()).append(" | `").append(c.method()).append("` | ").append(c.requests())
          .append(" | ").append(c.itemsQueried() > 0 ? num(c.itemsQueried()) : "–")
          .append(" | ").append(num(c.readUnits())).append(" | ").append(num(c.writeUnits())).append(" |");
      RATES.forEach(r -> md.append(' ').append(usd(c.monthlyUsd(r))).append(" |"));
      md.append('\n');
    }
    return md.toString();
  }

  static String usd(double value) {
    return String.format(Locale.ROOT, value >= 100 ? "%,.0f" : "%,.2f", value);
  }

  private static String pricesSentence() {
    return String.format(Locale.ROOT, "Cost: on-demand, %s, Standard table class, USD %.3f per million read request units "
            + "and USD %.3f per million write request units (the prices since %s, checked %s), a 30-day month, "
            + "reads and writes only (no storage, backups, streams or data transfer). On demand bills request units as "
            + "the capacity units here: a read 1 per 4 KB strongly consistent, 0.5 eventually consistent, 2 in a "
            + "transaction; a write 1 per 1 KB, 2 in a transaction; writes to %s count as writes.",
        PRICE_REGION, USD_PER_MILLION_READ_UNITS, USD_PER_MILLION_WRITE_UNITS, PRICES_EFFECTIVE, PRICES_CHECKED, SingleTable.GSI1);
  }

  private static String reading() {
    return "How to read it: the cost of a mix is the sum of each RPC's rate times its row. Reads are eventually "
        + "consistent unless the caller asks otherwise (a strong read costs twice); a Query costs by the total size of "
        + "the items it reads, so a full page of A3, A4 or A5 (26 items) costs more than the data set's short lists "
        + "here; A7 queries its 16 shards at once, at least 0.5 each. W1 is one PutItem; W2 to W5 are transactions "
        + "(twice the units) of two or three items, W2, W3 and W5 after strongly consistent reads of what they "
        + "change, and W2 and W3 also change the stock record's copy in GSI1 (counted as one standard write: the "
        + "launcher doubles a transaction's own items, not the index's copies).";
  }

  private static String scrape(Stack stack) {
    StringBuilder text = new StringBuilder();
    for (Proc p : List.of(stack.inventory, stack.orders)) {
      text.append(Scrape.text(p.metricsPort)).append('\n');
    }
    return text.toString();
  }

  /** The increase of {@code metric} over the samples with {@code label}, but those of requests that name no route. */
  private static double delta(String before, String after, String metric, String label) {
    return routed(after, metric, label) - routed(before, metric, label);
  }

  private static double routed(String text, String metric, String label) {
    return Scrape.sumWhere(text, metric, label) - Scrape.sumWhere(text, metric, label, NO_ROUTE);
  }

  /** DynamoDB requests per call, by operation: "GetItem 1, TransactWriteItems 1". */
  private static String requests(String before, String after, int calls) {
    List<String> parts = new ArrayList<>();
    for (String operation : OPERATIONS) {
      double perCall = delta(before, after, REQUESTS, "operation=\"" + operation + "\"") / calls;
      if (perCall > 0) {
        parts.add(operation + " " + (perCall == Math.rint(perCall) ? Long.toString((long) perCall) : num(perCall)));
      }
    }
    return parts.isEmpty() ? "none" : String.join(", ", parts);
  }

  private static int rank(String pattern) {
    return (pattern.charAt(0) == 'A' ? 0 : 100) + Integer.parseInt(pattern.substring(1));
  }
}
