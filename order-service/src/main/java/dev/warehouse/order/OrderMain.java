package dev.warehouse.order;

import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.type.Money;
import dev.warehouse.inventory.v1.ReservationServiceProto;
import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.domain.Delay;
import dev.warehouse.order.domain.OrderService;
import dev.warehouse.order.grpc.OrderGrpcEndpoint;
import dev.warehouse.order.recovery.OrderRecovery;
import dev.warehouse.order.stock.InventoryReservations;
import dev.warehouse.order.store.DynamoOrderRepository;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.discovery.AddressLookup;
import dev.warehouse.runtime.discovery.BackendAddress;
import dev.warehouse.runtime.discovery.BackendInstances;
import dev.warehouse.runtime.discovery.BackendServiceConfig;
import dev.warehouse.runtime.discovery.EventLoops;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.peer.PeerCalls;
import dev.warehouse.runtime.process.CdsTraining;
import dev.warehouse.runtime.threads.DaemonThreads;
import dev.warehouse.runtime.service.StoreContext;
import dev.warehouse.runtime.service.StoreServiceMain;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingClientInterceptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.LoggerFactory;

/**
 * Starts the order-service ({@code java -jar order-service.jar}), or runs the consistency audit
 * ({@code java -jar order-service.jar audit [--segments N] [--pages-per-second N]}), whose exit status is
 * 0 clean, 1 problems found, 2 bad arguments, 3 could not finish ({@link OrderAudit#run}), or the training
 * run of its class-data-sharing archive ({@code train-cds}, {@link CdsTraining}).
 */
public final class OrderMain {

  public static final String SERVICE_NAME = "order-service";
  public static final int DEFAULT_GRPC_PORT = 50053;
  public static final int DEFAULT_METRICS_PORT = 9093;
  /** The name of the inventory's circuit breaker and instance list (logs, metrics). */
  public static final String INVENTORY_SERVICE = "inventory-service";

  /** Calls in the inventory breaker's window; half failing opens it (as the gateway's do). */
  static final int CIRCUIT_WINDOW = 20;
  static final int CIRCUIT_MIN_CALLS = 10;
  /** How often the inventory channel's connectivity is looked at (as the gateway looks at its backends'). */
  static final Duration CONNECTIVITY_CHECK = Duration.ofMillis(500);

  private OrderMain() {}

  public static void main(String[] args) throws Exception {
    AddressLookup.disableJvmCache();
    if (CdsTraining.requested(args)) {
      CdsTraining.runAndExit(SERVICE_NAME, OrderMain::train);
    }
    StoreServiceConfig config = StoreServiceConfig.fromEnvironment(SERVICE_NAME, DEFAULT_GRPC_PORT, DEFAULT_METRICS_PORT, System.getenv());
    OrderSettings settings = OrderSettings.fromEnvironment(System.getenv(), config.tls());
    settings.fields().addTo(Events.info(LoggerFactory.getLogger(OrderMain.class), "order_settings")).log();
    StoreServiceMain.run(args, config, services(settings), (c, a, out) -> OrderAudit.run(c, a, out, settings.recoveryPeriod()));
  }

  /**
   * The training run of the class-data-sharing archive ({@link CdsTraining}): the start as {@code main}'s, with
   * its inventory channel over mutual TLS, the container's probe, then a read and an order as the gateway sends
   * them, which fail at their first DynamoDB call (no table behind the run).
   */
  static void train(CdsTraining training) throws Exception {
    Map<String, String> env = training.environment();
    env.put("INVENTORY_ADDRESSES", training.unreachableAddress());
    env.put("INVENTORY_TLS_MODE", "mtls");
    env.put("INVENTORY_TRUSTED_PEERS", CdsTraining.IDENTITY);
    StoreServiceConfig config = StoreServiceConfig.fromEnvironment(SERVICE_NAME, DEFAULT_GRPC_PORT, DEFAULT_METRICS_PORT, env);
    OrderSettings settings = OrderSettings.fromEnvironment(env, config.tls());
    try (ServerProcess process = DynamoPlugin.start(config, services(settings), List.of())) {
      training.probe(process.grpcPort());
      training.call(process.grpcPort(), List.of(
          channel -> OrderServiceGrpc.newBlockingStub(channel)
              .withDeadlineAfter(CdsTraining.CALL_DEADLINE_MS, TimeUnit.MILLISECONDS)
              .getOrder(GetOrderRequest.newBuilder().setOrderId("O1").build()),
          channel -> OrderServiceGrpc.newBlockingStub(channel)
              .withDeadlineAfter(CdsTraining.CALL_DEADLINE_MS, TimeUnit.MILLISECONDS)
              .placeOrder(PlaceOrderRequest.newBuilder().setCustomerId("C1").setRequestId("cds-training")
                  .addLines(OrderLine.newBuilder().setProductId("P1").setWarehouseId("W1").setQuantity(1)
                      .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(1)))
                  .build())));
    }
  }

  /** The environment variables the order-service reads. */
  public static List<String> variables() {
    List<String> names = new ArrayList<>(StoreServiceConfig.variables());
    OrderSettings.variables().stream().filter(name -> !names.contains(name)).forEach(names::add);
    return names;
  }

  /**
   * The production wiring, shared with the tests; public because the gateway's tests start order-service
   * instances in-process with it.
   */
  public static Function<StoreContext, List<BindableService>> services(OrderSettings settings) {
    return context -> services(context, settings);
  }

  public static List<BindableService> services(StoreContext context, OrderSettings settings) {
    DynamoOrderRepository repository = new DynamoOrderRepository(context.store());
    OrderService service = new OrderService(repository, inventory(context, settings), context.clock(),
        Delay.on(context.scheduler()), settings.timings(), context.meterRegistry());
    if (!settings.recoveryPeriod().isZero()) {
      context.resources().closeOnStop(new OrderRecovery(service, context.clock(), context.meterRegistry())
          .start(context.scheduler(), settings.recoveryPeriod()));
    }
    return List.of(new OrderGrpcEndpoint(service));
  }

  /**
   * The inventory's reservations, over one channel balanced across its instances (looked up as the gateway
   * looks up its backends), health-checked by the reservation service's name, secured by
   * {@code INVENTORY_TLS_MODE} with this process's own identity, and guarded by a circuit breaker.
   */
  static InventoryReservations inventory(StoreContext context, OrderSettings settings) {
    ServiceDescriptor reservations = ReservationServiceProto.getDescriptor().findServiceByName("ReservationService");
    dev.warehouse.runtime.process.Resources resources = context.resources();
    ScheduledExecutorService resolver = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("inventory-resolver"));
    resources.closeOnStop(resolver::shutdownNow);
    BackendInstances instances = resources.closeOnStop(new BackendInstances(INVENTORY_SERVICE,
        BackendAddress.parseAll(settings.inventoryAddresses()), AddressLookup.SYSTEM, settings.resolvePeriod(), resolver,
        context.clock()).start());
    EventLoopGroup loops = EventLoops.group(1, "inventory-client");
    resources.closeOnStop(() -> loops.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly());
    ManagedChannel channel = EventLoops.channelTo(instances, loops,
            context.transport().channelCredentials(settings.inventoryTls()))
        .defaultServiceConfig(BackendServiceConfig.of(reservations))
        .disableRetry() // PeerCalls': idempotent calls only, within the deadline
        .intercept(new MetricCollectingClientInterceptor(context.meterRegistry()), context.tracing().clientInterceptor())
        .build();
    resources.closeOnStop(() -> EventLoops.close(List.of(channel)));
    CircuitBreakerRegistry circuits = CircuitBreakerRegistry.of(
        PeerCalls.breakerConfig(CIRCUIT_WINDOW, CIRCUIT_MIN_CALLS, settings.circuitOpenFor()));
    TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(circuits).bindTo(context.meterRegistry());
    CircuitBreaker breaker = circuits.circuitBreaker(INVENTORY_SERVICE);
    // Wait for ready: an inventory instance restarting delays a call within its deadline instead of failing it.
    PeerCalls calls = new PeerCalls(INVENTORY_SERVICE, breaker, BackendServiceConfig.retryableFullNames(reservations),
        settings.callTimeout(), settings.minCallBudget(), true, channel::resetConnectBackoff, context.scheduler(),
        context.meterRegistry());
    // A restarted inventory is found, and its circuit tried, within a period: not after the channel's growing
    // reconnect backoff or the rest of the open time, which outlasted the step grace after short outages.
    resolver.scheduleWithFixedDelay(() -> calls.observe(channel.getState(true)), 0,
        CONNECTIVITY_CHECK.toMillis(), TimeUnit.MILLISECONDS);
    return new InventoryReservations(channel, calls);
  }
}
