package dev.warehouse.inventory;

import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.domain.Reservations;
import dev.warehouse.inventory.expiry.HoldExpiry;
import dev.warehouse.inventory.grpc.InventoryGrpcEndpoint;
import dev.warehouse.inventory.grpc.ReservationGrpcEndpoint;
import dev.warehouse.inventory.store.DynamoInventoryRepository;
import dev.warehouse.inventory.store.DynamoReservationRepository;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.runtime.config.EnvReader;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.server.CdsTraining;
import dev.warehouse.runtime.server.JvmSetup;
import dev.warehouse.runtime.service.ServiceContext;
import dev.warehouse.runtime.service.ServiceMain;
import dev.warehouse.runtime.service.ServiceProcess;
import io.grpc.BindableService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the inventory-service ({@code java -jar inventory-service.jar}), or runs the low-stock marker
 * audit ({@code java -jar inventory-service.jar audit [--segments N] [--pages-per-second N]}), whose exit
 * status is 0 clean, 1 problems found, 2 bad arguments, 3 could not finish ({@link InventoryAudit#run}), or
 * the training run of its class-data-sharing archive ({@code train-cds}, {@link CdsTraining}).
 */
public final class InventoryMain {

  public static final String SERVICE_NAME = "inventory-service";
  public static final int DEFAULT_GRPC_PORT = 50052;
  public static final int DEFAULT_METRICS_PORT = 9092;

  /** A7's shard count: the route's declared one unless a deployment sets another (see {@link LowStockShards}). */
  public static final String LOW_STOCK_SHARDS = "LOW_STOCK_SHARDS";

  /** How long a hold lasts unless confirmed, when ReserveStock does not say (1 to 900 s; default 60). */
  public static final String RESERVATION_HOLD_SECONDS = "RESERVATION_HOLD_SECONDS";
  /** How often the expiry loop releases the holds past their expiry (1 to 3600 s; default 10). */
  public static final String RESERVATION_SWEEP_SECONDS = "RESERVATION_SWEEP_SECONDS";

  /**
   * With {@code GRPC_TLS_MODE=mtls}, the identities that may call {@code warehouse.inventory.v1.ReservationService}
   * (default the order-service's), instead of {@code TLS_TRUSTED_PEERS}, which keeps admitting the public
   * services' callers (the gateway): neither may call the other's service.
   */
  public static final String RESERVATION_TRUSTED_PEERS = "RESERVATION_TRUSTED_PEERS";
  /** The order-service's identity: the only caller of ReservationService unless configured otherwise. */
  public static final String ORDER_SERVICE_IDENTITY = "spiffe://warehouse.local/order-service";

  /**
   * The reservations' settings: a hold of 60 s and a sweep every 10 s give abandoned stock back within
   * about 70 s, well inside 2 minutes (docs/behaviour.md, crashes).
   */
  public record ReservationSettings(Duration hold, Duration sweep) {
    public static final ReservationSettings DEFAULT = new ReservationSettings(Duration.ofSeconds(60), Duration.ofSeconds(10));
  }

  static {
    // Before the logger below: Logback configures itself for it, and should find the process set up as ServiceMain sets it.
    JvmSetup.configureLogging();
    JvmSetup.configureNetty();
  }

  private static final Logger log = LoggerFactory.getLogger(InventoryMain.class);

  private InventoryMain() {}

  public static void main(String[] args) throws Exception {
    if (CdsTraining.requested(args)) {
      CdsTraining.runAndExit(SERVICE_NAME, InventoryMain::train);
    }
    Map<String, String> env = System.getenv();
    LowStockShards shards = lowStockShards(env);
    ReservationSettings reservations = reservationSettings(env);
    ServiceMain.run(args, config(env), context -> services(context, shards, reservations), InventoryAudit.command(shards));
  }

  /** Every service's settings, and who may call the reservations. */
  static ServiceConfig config(Map<String, String> env) {
    ServiceConfig config = ServiceConfig.fromEnvironment(SERVICE_NAME, DEFAULT_GRPC_PORT, DEFAULT_METRICS_PORT, env);
    return config.withTls(config.tls().withServicePeers(ReservationServiceGrpc.SERVICE_NAME, reservationPeers(env)));
  }

  /**
   * The training run of the class-data-sharing archive ({@link CdsTraining}): the start as {@code main}'s, the
   * container's probe, then a read and a write as the gateway sends them, which fail (no table behind the run).
   */
  static void train(CdsTraining training) throws Exception {
    Map<String, String> env = training.environment();
    env.put(RESERVATION_TRUSTED_PEERS, CdsTraining.IDENTITY);
    LowStockShards shards = lowStockShards(env);
    ReservationSettings reservations = reservationSettings(env);
    try (ServiceProcess process = ServiceProcess.start(config(env), context -> services(context, shards, reservations),
        List.of())) {
      training.probe(process.grpcPort());
      training.call(process.grpcPort(), List.of(
          channel -> InventoryServiceGrpc.newBlockingStub(channel)
              .withDeadlineAfter(CdsTraining.CALL_DEADLINE_MS, TimeUnit.MILLISECONDS)
              .getProductInventory(GetProductInventoryRequest.newBuilder().setProductId("P1").setWarehouseId("W1").build()),
          channel -> InventoryServiceGrpc.newBlockingStub(channel)
              .withDeadlineAfter(CdsTraining.CALL_DEADLINE_MS, TimeUnit.MILLISECONDS)
              .adjustStock(AdjustStockRequest.newBuilder().setProductId("P1").setWarehouseId("W1").setDelta(1)
                  .setRequestId("cds-training").build())));
    }
  }

  /** The environment variables the inventory-service reads. */
  public static List<String> variables() {
    List<String> names = new ArrayList<>(ServiceConfig.variables());
    names.add(LOW_STOCK_SHARDS);
    names.add(RESERVATION_HOLD_SECONDS);
    names.add(RESERVATION_SWEEP_SECONDS);
    names.add(RESERVATION_TRUSTED_PEERS);
    return names;
  }

  /**
   * {@value #RESERVATION_TRUSTED_PEERS}: comma-separated URIs; {@value #ORDER_SERVICE_IDENTITY} when unset.
   *
   * @throws IllegalArgumentException when one is not a URI, or it is set but names none
   */
  public static dev.warehouse.runtime.tls.TrustedPeers reservationPeers(Map<String, String> env) {
    EnvReader reader = new EnvReader(env);
    List<String> peers = env.containsKey(RESERVATION_TRUSTED_PEERS) ? reader.identities(RESERVATION_TRUSTED_PEERS)
        : List.of(ORDER_SERVICE_IDENTITY);
    reader.throwIfProblems();
    return dev.warehouse.runtime.tls.TrustedPeers.of(peers);
  }

  /**
   * {@value #RESERVATION_HOLD_SECONDS} and {@value #RESERVATION_SWEEP_SECONDS}.
   *
   * @throws IllegalArgumentException when one is malformed or out of range
   */
  public static ReservationSettings reservationSettings(Map<String, String> env) {
    EnvReader reader = new EnvReader(env);
    int hold = reader.positiveInt(RESERVATION_HOLD_SECONDS, (int) ReservationSettings.DEFAULT.hold().toSeconds());
    int sweep = reader.positiveInt(RESERVATION_SWEEP_SECONDS, (int) ReservationSettings.DEFAULT.sweep().toSeconds());
    if (hold > ReservationGrpcEndpoint.MAX_HOLD.toSeconds()) {
      reader.problem(RESERVATION_HOLD_SECONDS + " must be 1 to " + ReservationGrpcEndpoint.MAX_HOLD.toSeconds() + ", got " + hold);
    }
    if (sweep > 3600) {
      reader.problem(RESERVATION_SWEEP_SECONDS + " must be 1 to 3600, got " + sweep);
    }
    reader.throwIfProblems();
    return new ReservationSettings(Duration.ofSeconds(hold), Duration.ofSeconds(sweep));
  }

  /**
   * {@value #LOW_STOCK_SHARDS}, 1 to {@value Route.FanOut#MAX_SHARDS}; the route's count when unset.
   *
   * @throws IllegalArgumentException when it is malformed or out of range
   */
  public static LowStockShards lowStockShards(Map<String, String> env) {
    EnvReader reader = new EnvReader(env);
    int count = reader.positiveInt(LOW_STOCK_SHARDS, LowStockShards.DECLARED.count());
    if (count > Route.FanOut.MAX_SHARDS) {
      reader.problem(LOW_STOCK_SHARDS + " must be 1 to " + Route.FanOut.MAX_SHARDS + ", got " + count);
    }
    reader.throwIfProblems();
    return LowStockShards.of(count);
  }

  /**
   * The production wiring with the route's shard count, shared with the tests; public because the
   * gateway's tests start inventory-service instances in-process with it.
   */
  public static List<BindableService> services(ServiceContext context) {
    return services(context, LowStockShards.DECLARED);
  }

  public static List<BindableService> services(ServiceContext context, LowStockShards shards) {
    return services(context, shards, ReservationSettings.DEFAULT);
  }

  /**
   * Both services of the process, InventoryService and ReservationService, and the expiry loop of the
   * reservations on the process's timer.
   */
  public static List<BindableService> services(ServiceContext context, LowStockShards shards,
      ReservationSettings settings) {
    if (shards.count() != LowStockShards.DECLARED.count()) {
      Events.warn(log, "low_stock_shards").addKeyValue("count", shards.count())
          .addKeyValue("declared", LowStockShards.DECLARED.count())
          .addKeyValue("detail", "markers written with another count are not listed by A7 until rewritten").log();
    }
    DynamoInventoryRepository repository = new DynamoInventoryRepository(context.store(), shards);
    InventoryService service = new InventoryService(repository, context.clock());
    Reservations reservations = new Reservations(new DynamoReservationRepository(context.store(), shards), context.clock(),
        settings.hold(), context.meterRegistry());
    context.resources().closeOnStop(
        new HoldExpiry(reservations, context.clock(), settings.sweep(), context.scheduler(), context.meterRegistry()).start());
    return List.of(new InventoryGrpcEndpoint(service, InventoryKeys.ROUTES), new ReservationGrpcEndpoint(reservations));
  }
}
