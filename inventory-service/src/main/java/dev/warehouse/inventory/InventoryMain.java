package dev.warehouse.inventory;

import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.grpc.InventoryGrpcEndpoint;
import dev.warehouse.inventory.store.DynamoInventoryRepository;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.server.ServiceContext;
import dev.warehouse.runtime.server.ServiceMain;
import io.grpc.BindableService;
import java.util.List;

/**
 * Starts the inventory-service ({@code java -jar inventory-service.jar}), or runs the low-stock marker
 * audit ({@code java -jar inventory-service.jar audit [--segments N] [--pages-per-second N]}), whose exit
 * status is 0 clean, 1 problems found, 2 bad arguments, 3 could not finish ({@link InventoryAudit#run}).
 */
public final class InventoryMain {

  public static final String SERVICE_NAME = "inventory-service";
  public static final int DEFAULT_GRPC_PORT = 50052;
  public static final int DEFAULT_METRICS_PORT = 9092;

  private InventoryMain() {}

  public static void main(String[] args) throws Exception {
    ServiceConfig config = ServiceConfig.fromEnvironment(SERVICE_NAME, DEFAULT_GRPC_PORT, DEFAULT_METRICS_PORT, System.getenv());
    ServiceMain.run(args, config, InventoryMain::services, InventoryAudit::run);
  }

  /**
   * The production wiring, shared with the tests; public because the gateway's tests start
   * inventory-service instances in-process with it.
   */
  public static List<BindableService> services(ServiceContext context) {
    DynamoInventoryRepository repository = new DynamoInventoryRepository(context.store());
    InventoryService service = new InventoryService(repository, context.clock());
    return List.of(new InventoryGrpcEndpoint(service, InventoryKeys.ROUTES));
  }
}
