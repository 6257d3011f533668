package dev.warehouse.inventory;

import dev.warehouse.inventory.grpc.ReservationGrpcEndpoint;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.store.StockBuckets;
import dev.warehouse.runtime.env.EnvReader;
import dev.warehouse.runtime.log.Fields;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.tls.TrustedPeers;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What the inventory-service reads besides every table service's settings ({@code StoreServiceConfig}), read once
 * by {@code main}; tests build it directly.
 *
 * @param shards           A7's low-stock marker shards ({@value #LOW_STOCK_SHARDS}, 1 to {@value Route.FanOut#MAX_SHARDS}): the route's declared
 *                         count unless a deployment sets another (see {@link LowStockShards})
 * @param hold             how long a hold lasts unless confirmed, when ReserveStock does not say
 *                         ({@value #RESERVATION_HOLD_SECONDS}, 1 to 900 s)
 * @param sweep            how often the expiry loop releases the holds past their expiry
 *                         ({@value #RESERVATION_SWEEP_SECONDS}, 1 to 3600 s)
 * @param reservationPeers with {@code GRPC_TLS_MODE=mtls}, the identities that may call
 *                         {@code warehouse.inventory.v1.ReservationService} ({@value #RESERVATION_TRUSTED_PEERS},
 *                         default the order-service's), instead of {@code TLS_TRUSTED_PEERS}, which keeps admitting
 *                         the public services' callers (the gateway): neither may call the other's service
 */
public record InventorySettings(LowStockShards shards, Duration hold, Duration sweep, TrustedPeers reservationPeers,
    Duration rebalanceDelay, int splitAtUnits) {

  public static final String LOW_STOCK_SHARDS = "LOW_STOCK_SHARDS";
  public static final String RESERVATION_HOLD_SECONDS = "RESERVATION_HOLD_SECONDS";
  public static final String RESERVATION_SWEEP_SECONDS = "RESERVATION_SWEEP_SECONDS";
  public static final String RESERVATION_TRUSTED_PEERS = "RESERVATION_TRUSTED_PEERS";
  /** How long after a change asks for it a split stock's buckets are evened out (W10's moves). */
  public static final String STOCK_REBALANCE_DELAY_MS = "STOCK_REBALANCE_DELAY_MS";
  /** Write units a second of one stock item past which the service doubles its product's buckets; 0: never. */
  public static final String STOCK_SPLIT_AT_UNITS = "STOCK_SPLIT_AT_UNITS";
  /** The order-service's identity: the only caller of ReservationService unless configured otherwise. */
  public static final String ORDER_SERVICE_IDENTITY = "spiffe://warehouse.local/order-service";

  /**
   * The defaults: a hold of 60 s and a sweep every 10 s give abandoned stock back within about 70 s, well inside
   * 2 minutes (docs/behaviour.md, crashes).
   */
  public static final InventorySettings DEFAULT = new InventorySettings(LowStockShards.DECLARED, Duration.ofSeconds(60),
      Duration.ofSeconds(10), TrustedPeers.of(List.of(ORDER_SERVICE_IDENTITY)), StockBuckets.DEFAULT_REBALANCE_DELAY, 500);

  /**
   * Reads the settings, each absent one its default.
   *
   * @throws IllegalArgumentException naming every malformed or out-of-range variable
   */
  public static InventorySettings fromEnvironment(Map<String, String> env) {
    EnvReader reader = new EnvReader(env);
    InventorySettings settings = read(reader, env);
    reader.throwIfProblems();
    return settings;
  }

  /** The environment variables read here. */
  public static List<String> variables() {
    EnvReader reader = new EnvReader(Map.of());
    read(reader, Map.of());
    return reader.names();
  }

  private static InventorySettings read(EnvReader reader, Map<String, String> env) {
    int shards = reader.positiveInt(LOW_STOCK_SHARDS, DEFAULT.shards().count());
    if (shards > Route.FanOut.MAX_SHARDS) {
      reader.problem(LOW_STOCK_SHARDS + " must be 1 to " + Route.FanOut.MAX_SHARDS + ", got " + shards);
      shards = DEFAULT.shards().count();
    }
    int hold = reader.positiveInt(RESERVATION_HOLD_SECONDS, (int) DEFAULT.hold().toSeconds());
    if (hold > ReservationGrpcEndpoint.MAX_HOLD.toSeconds()) {
      reader.problem(RESERVATION_HOLD_SECONDS + " must be 1 to " + ReservationGrpcEndpoint.MAX_HOLD.toSeconds()
          + ", got " + hold);
    }
    int sweep = reader.positiveInt(RESERVATION_SWEEP_SECONDS, (int) DEFAULT.sweep().toSeconds());
    if (sweep > 3600) {
      reader.problem(RESERVATION_SWEEP_SECONDS + " must be 1 to 3600, got " + sweep);
    }
    List<String> peers = reader.identities(RESERVATION_TRUSTED_PEERS);
    int rebalance = reader.positiveInt(STOCK_REBALANCE_DELAY_MS, (int) DEFAULT.rebalanceDelay().toMillis());
    if (rebalance > 60_000) {
      reader.problem(STOCK_REBALANCE_DELAY_MS + " must be 1 to 60000, got " + rebalance);
    }
    int splitAt = reader.nonNegativeInt(STOCK_SPLIT_AT_UNITS, DEFAULT.splitAtUnits());
    return new InventorySettings(LowStockShards.of(Math.max(1, shards)), Duration.ofSeconds(hold),
        Duration.ofSeconds(sweep), env.containsKey(RESERVATION_TRUSTED_PEERS) ? TrustedPeers.of(peers)
            : DEFAULT.reservationPeers(), Duration.ofMillis(rebalance), splitAt);
  }

  /** The same settings with other hold and sweep periods. */
  public InventorySettings withReservations(Duration hold, Duration sweep) {
    return new InventorySettings(shards, hold, sweep, reservationPeers, rebalanceDelay, splitAtUnits);
  }

  /** The same settings with split stock evened out {@code delay} after a change asks (long: not during a test). */
  public InventorySettings withRebalanceDelay(Duration delay) {
    return new InventorySettings(shards, hold, sweep, reservationPeers, delay, splitAtUnits);
  }

  /** The same settings with {@code shards} low-stock marker shards. */
  public InventorySettings withShards(LowStockShards shards) {
    return new InventorySettings(shards, hold, sweep, reservationPeers, rebalanceDelay, splitAtUnits);
  }

  /** The fields of the start-up log line. */
  public Fields fields() {
    return new Fields().add("low_stock_shards", shards.count()).add("reservation_hold_s", hold.toSeconds())
        .add("reservation_sweep_s", sweep.toSeconds()).add("reservation_trusted_peers", reservationPeers.describe())
        .add("stock_rebalance_delay_ms", rebalanceDelay.toMillis()).add("stock_split_at_units", splitAtUnits);
  }
}
