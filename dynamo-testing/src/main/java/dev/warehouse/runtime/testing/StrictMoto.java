package dev.warehouse.runtime.testing;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;
import java.util.regex.Pattern;

/**
 * Per-table settings of the shared moto server's strict mode (see {@code tools/moto/strict_moto/settings.py}):
 * how often and how far eventually consistent reads lag, how often transactions are cancelled by a
 * conflict, how long a ClientRequestToken is remembered, how long a transaction takes. Test classes
 * share one server and keep apart by table, so each sets what it needs on its own table, even before
 * the table exists:
 *
 * <pre>{@code
 * StrictMoto.table(table).staleReads(1.0, Duration.ofMillis(300)).conflictRate(0.5)
 *     .tokenWindow(Duration.ofSeconds(2)).transactionLatency(Duration.ofMillis(500)).apply();
 * ...
 * StrictMoto.reset(table);
 * }</pre>
 *
 * <p>Settings left out keep what the table had, at first the launcher's defaults: every eventually
 * consistent read sees the table as it was 200 ms ago, no conflicts, a 10-minute token window, no
 * added latency. A server started lenient ({@code MOTO_LENIENT=true}) accepts settings and changes
 * nothing; {@link #isStrict()} tells which.
 */
public final class StrictMoto {

  private static final HttpClient HTTP = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private static final Pattern STRICT = Pattern.compile("\"strict\"\\s*:\\s*true");

  private StrictMoto() {}

  /** Settings to {@link TableSettings#apply() apply} to {@code tableName}. */
  public static TableSettings table(String tableName) {
    return new TableSettings(tableName);
  }

  /** Puts {@code tableName} back on the launcher's defaults. */
  public static void reset(String tableName) {
    send(HttpRequest.newBuilder(tableUri(tableName)).DELETE());
  }

  /** Whether the shared server models DynamoDB strictly (false when it was started lenient). */
  public static boolean isStrict() {
    return STRICT.matcher(send(HttpRequest.newBuilder(MotoServer.endpoint().resolve("/_strict")).GET())).find();
  }

  /** Settings of one table, sent together by {@link #apply()}. */
  public static final class TableSettings {

    private final String tableName;
    private final Map<String, Double> values = new LinkedHashMap<>();

    private TableSettings(String tableName) {
      this.tableName = tableName;
    }

    /**
     * Each eventually consistent read (a GetItem or Query without ConsistentRead, any Query on a global
     * index) sees, with {@code probability}, the table as it was {@code lag} ago. 0 or a zero lag: reads
     * are always fresh.
     */
    public TableSettings staleReads(double probability, Duration lag) {
      values.put("stale_read_probability", fraction("probability", probability));
      values.put("consistency_lag_ms", millis("lag", lag));
      return this;
    }

    /** The chance that a TransactWriteItems whose first item is on this table is cancelled by a TransactionConflict. */
    public TableSettings conflictRate(double rate) {
      values.put("conflict_rate", fraction("rate", rate));
      return this;
    }

    /**
     * How long a committed ClientRequestToken is remembered (DynamoDB: 10 minutes), for transactions
     * whose first item is on this table.
     */
    public TableSettings tokenWindow(Duration window) {
      values.put("token_window_ms", millis("window", window));
      return this;
    }

    /**
     * How long each TransactWriteItems whose first item is on this table waits, its token already in
     * flight, before it applies: a duplicate sent meanwhile fails with TransactionInProgressException.
     */
    public TableSettings transactionLatency(Duration latency) {
      values.put("transaction_latency_ms", millis("latency", latency));
      return this;
    }

    /**
     * The throughput one partition key of this table is served before it is throttled, as DynamoDB throttles a
     * hot key (1000 write and 3000 read units a second there, and the launcher's default); 0 lifts a limit.
     * {@code burst} is how much of it a key may use at once after an idle spell. moto serves a few hundred
     * requests a second in all, so a test scales the limits down until one key, not moto, is the bottleneck.
     */
    public TableSettings partitionThroughput(double writeUnitsPerSecond, double readUnitsPerSecond, Duration burst) {
      values.put("partition_write_units", nonNegative("write units", writeUnitsPerSecond));
      values.put("partition_read_units", nonNegative("read units", readUnitsPerSecond));
      values.put("burst_seconds", millis("burst", burst) / 1000.0);
      return this;
    }

    /** Sends the settings; those not set keep their current values. */
    public void apply() {
      StringJoiner json = new StringJoiner(",", "{", "}");
      values.forEach((name, value) -> json.add("\"" + name + "\":" + value));
      send(HttpRequest.newBuilder(tableUri(tableName))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(json.toString())));
    }

    private static double fraction(String what, double value) {
      if (!(value >= 0.0 && value <= 1.0)) {
        throw new IllegalArgumentException(what + " must be between 0 and 1: " + value);
      }
      return value;
    }

    private static double nonNegative(String what, double value) {
      if (!(value >= 0.0) || Double.isInfinite(value)) {
        throw new IllegalArgumentException(what + " must be a number of at least 0: " + value);
      }
      return value;
    }

    private static double millis(String what, Duration value) {
      if (value.isNegative()) {
        throw new IllegalArgumentException(what + " must not be negative: " + value);
      }
      return value.toNanos() / 1_000_000.0;
    }
  }

  private static URI tableUri(String tableName) {
    return MotoServer.endpoint().resolve("/_strict/tables/" + URLEncoder.encode(tableName, StandardCharsets.UTF_8));
  }

  private static String send(HttpRequest.Builder request) {
    try {
      HttpResponse<String> response = HTTP.send(request.timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException("moto's /_strict answered " + response.statusCode() + ": " + response.body());
      }
      return response.body();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
