package dev.warehouse.inventory;

import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.domain.Reservations;
import dev.warehouse.inventory.expiry.HoldExpiry;
import dev.warehouse.inventory.grpc.InventoryGrpcEndpoint;
import dev.warehouse.inventory.grpc.ReservationGrpcEndpoint;
import dev.warehouse.inventory.store.DynamoInventoryRepository;
import dev.warehouse.inventory.store.DynamoReservationRepository;
import dev.warehouse.inventory.store.StockBuckets;
import dev.warehouse.inventory.store.StockChanges;
import dev.warehouse.inventory.store.StockSplitter;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.process.CdsTraining;
import dev.warehouse.runtime.process.JvmSetup;
import dev.warehouse.runtime.service.StoreContext;
import dev.warehouse.runtime.service.StoreServiceMain;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import io.grpc.BindableService;
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

  static {
    // Before the logger below: Logback configures itself for it, and should find the process set up as ProcessMain sets it.
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
    InventorySettings settings = InventorySettings.fromEnvironment(env);
    settings.fields().addTo(Events.info(log, "inventory_settings")).log();
    StoreServiceMain.run(args, config(env, settings), context -> services(context, settings),
        InventoryAudit.command(settings.shards()));
  }

  /** Every table service's settings, and who may call the reservations. */
  static StoreServiceConfig config(Map<String, String> env, InventorySettings settings) {
    StoreServiceConfig config = StoreServiceConfig.fromEnvironment(SERVICE_NAME, DEFAULT_GRPC_PORT, DEFAULT_METRICS_PORT, env);
    return config.withTls(config.tls().withServicePeers(ReservationServiceGrpc.SERVICE_NAME, settings.reservationPeers()));
  }

  /**
   * The training run of the class-data-sharing archive ({@link CdsTraining}): the start as {@code main}'s, the
   * container's probe, then a read and a write as the gateway sends them, which fail (no table behind the run).
   */
  static void train(CdsTraining training) throws Exception {
    Map<String, String> env = training.environment();
    env.put(InventorySettings.RESERVATION_TRUSTED_PEERS, CdsTraining.IDENTITY);
    InventorySettings settings = InventorySettings.fromEnvironment(env);
    try (ServerProcess process = DynamoPlugin.start(config(env, settings), context -> services(context, settings),
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
    List<String> names = new ArrayList<>(StoreServiceConfig.variables());
    names.addAll(InventorySettings.variables());
    return names;
  }

  /**
   * The production wiring with the default settings, shared with the tests; public because the gateway's tests start
   * inventory-service instances in-process with it.
   */
  public static List<BindableService> services(StoreContext context) {
    return services(context, InventorySettings.DEFAULT);
  }

  /**
   * Both services of the process, InventoryService and ReservationService, and the expiry loop of the
   * reservations on the process's timer.
   */
  public static List<BindableService> services(StoreContext context, InventorySettings settings) {
    LowStockShards shards = settings.shards();
    if (shards.count() != LowStockShards.DECLARED.count()) {
      Events.warn(log, "low_stock_shards").addKeyValue("count", shards.count())
          .addKeyValue("declared", LowStockShards.DECLARED.count())
          .addKeyValue("detail", "markers written with another count are not listed by A7 until rewritten").log();
    }
    // One memory of which stock is split, shared by both repositories.
    StockBuckets buckets = new StockBuckets(context.store(), new StockChanges(context.store().table(), shards), context.clock(),
        settings.rebalanceDelay());
    DynamoInventoryRepository repository = new DynamoInventoryRepository(context.store(), shards, buckets);
    InventoryService service = new InventoryService(repository, context.clock());
    Reservations reservations = new Reservations(new DynamoReservationRepository(context.store(), shards, buckets), context.clock(),
        settings.hold(), context.meterRegistry());
    if (settings.splitAtUnits() > 0) {
      context.resources().closeOnStop(new StockSplitter(context.hotKeys(), buckets,
          (product, warehouse, count) -> repository.setBucketCount(product, warehouse, count, context.clock().instant()),
          settings.splitAtUnits(), context.meterRegistry()).start(context.scheduler()));
    }
    context.resources().closeOnStop(
        new HoldExpiry(reservations, context.clock(), settings.sweep(), context.scheduler(), context.meterRegistry()).start());
    return List.of(new InventoryGrpcEndpoint(service, InventoryKeys.ROUTES), new ReservationGrpcEndpoint(reservations));
  }
}
