package dev.warehouse.order;

import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.domain.OrderService;
import dev.warehouse.order.grpc.OrderGrpcEndpoint;
import dev.warehouse.order.store.DynamoOrderRepository;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.server.ServiceContext;
import dev.warehouse.runtime.server.ServiceMain;
import io.grpc.BindableService;
import java.util.List;

/**
 * Starts the order-service ({@code java -jar order-service.jar}), or runs the consistency audit
 * ({@code java -jar order-service.jar audit [--segments N] [--pages-per-second N]}), whose exit status is
 * 0 clean, 1 problems found, 2 bad arguments, 3 could not finish ({@link OrderAudit#run}).
 */
public final class OrderMain {

  public static final String SERVICE_NAME = "order-service";
  public static final int DEFAULT_GRPC_PORT = 50053;
  public static final int DEFAULT_METRICS_PORT = 9093;
  private OrderMain() {}

  public static void main(String[] args) throws Exception {
    ServiceConfig config = ServiceConfig.fromEnvironment(SERVICE_NAME, DEFAULT_GRPC_PORT, DEFAULT_METRICS_PORT, System.getenv());
    ServiceMain.run(args, config, OrderMain::services, OrderAudit::run);
  }

  /**
   * The production wiring, shared with the tests; public because the gateway's tests start
   * order-service instances in-process with it.
   */
  public static List<BindableService> services(ServiceContext context) {
    DynamoOrderRepository repository = new DynamoOrderRepository(context.store());
    return List.of(new OrderGrpcEndpoint(new OrderService(repository, context.clock())));
  }
}
