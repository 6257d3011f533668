package dev.warehouse.runtime.server;

import dev.warehouse.runtime.admission.Admission;
import dev.warehouse.runtime.admission.RouteLimiter;
import dev.warehouse.runtime.admin.AdminGrpcEndpoint;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.dynamo.DynamoClients;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.TableSetup;
import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.runtime.metrics.DynamoMetrics;
import dev.warehouse.runtime.metrics.MetricsRegistries;
import dev.warehouse.runtime.metrics.MetricsServer;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.tls.TransportSecurity;
import io.grpc.BindableService;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * One running service process: metrics registry, DynamoDB client, optional table creation, the gRPC
 * server on Netty and the metrics endpoint, wired by hand. {@code main} and the tests both start
 * services through {@link #start}, so tests run the production wiring. Besides the service's own
 * services it serves {@code warehouse.admin.v1.AdminService} (the hot keys its DynamoDB requests went
 * to, counted by {@link DynamoMetrics} into {@link HotKeys}).
 */
public final class ServiceProcess implements AutoCloseable {

  private static final Logger log = Logger.getLogger(ServiceProcess.class.getName());

  private final ServiceServer server;
  private final MetricsServer metrics;
  private final DynamoDbAsyncClient dynamo;
  private final ScheduledExecutorService scheduler;
  private final TransportSecurity transport;
  private final ServiceContext.Resources resources;

  private ServiceProcess(ServiceServer server, MetricsServer metrics, DynamoDbAsyncClient dynamo,
      ScheduledExecutorService scheduler, TransportSecurity transport, ServiceContext.Resources resources) {
    this.server = server;
    this.metrics = metrics;
    this.dynamo = dynamo;
    this.scheduler = scheduler;
    this.transport = transport;
    this.resources = resources;
  }

  /**
   * Starts a service.
   *
   * @param services          builds the gRPC services from the process's shared objects
   * @param sdkInterceptors   extra DynamoDB request interceptors (tests record requests with one)
   */
  public static ServiceProcess start(ServiceConfig config, Function<ServiceContext, List<BindableService>> services,
      List<ExecutionInterceptor> sdkInterceptors) throws IOException {
    long started = System.nanoTime();
    log.info("event=starting " + config.describe());
    // First, so that unreadable certificates fail the start before anything else is built.
    TransportSecurity transport = TransportSecurity.load(config.tls());
    PrometheusMeterRegistry registry = MetricsRegistries.prometheus(config.serviceName());
    Clock clock = Clock.systemUTC();
    HotKeys hotKeys = new HotKeys(clock, registry, config.hotKeyLogShare());
    List<ExecutionInterceptor> interceptors = new ArrayList<>(sdkInterceptors);
    interceptors.add(new DynamoMetrics(registry, hotKeys));
    DynamoDbAsyncClient dynamo = DynamoClients.create(config, interceptors);
    if (config.createTable()) {
      TableSetup.ensureTable(dynamo, config.tableName(), Duration.ofMinutes(2));
    }
    PageTokenCodec pageTokens = config.pageTokenKey()
        .map(key -> new PageTokenCodec(key, config.acceptedPageTokenKeys())).orElseGet(() -> {
      log.warning("event=page_token_key_random detail=\"set PAGE_TOKEN_KEY so instances accept each other's page tokens\"");
      return PageTokenCodec.withRandomKey();
    });
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("timer"));
    DynamoStore store = new DynamoStore(dynamo, config.tableName(),
        new DynamoCalls(scheduler, registry, config.dynamoCallTimeout()), pageTokens, registry);
    ServiceContext.Resources resources = new ServiceContext.Resources();
    ServiceContext context = new ServiceContext(config, dynamo, store, registry, pageTokens, clock, scheduler, transport,
        resources);
    List<BindableService> served = new ArrayList<>(services.apply(context));
    // The service's own methods share one concurrency limit, a slot taken at a call's first store call.
    List<String> methods = served.stream().flatMap(service -> service.bindService().getMethods().stream())
        .map(method -> method.getMethodDescriptor().getFullMethodName()).toList();
    RouteLimiter limiter = new RouteLimiter(config.serviceName(),
        methods.stream().map(io.grpc.MethodDescriptor::extractBareMethodName).toList(), config.admission(), registry);
    served.add(new AdminGrpcEndpoint(config.serviceName(), hotKeys));

    // Handlers run on the gRPC I/O threads: they never block (the DynamoDB client is asynchronous, and
    // its credentials were resolved before serving and refresh in the background), and a hand-off to a
    // handler pool cost 0.05-0.15 ms of every call's p50 in the layer benchmark (docs/performance-log.md).
    ServiceServer server = new ServiceServer(
        transport.serverBuilder(ServiceConfig.listenAddress(config.grpcBindAddress(), config.grpcPort())).directExecutor(),
        served,
        List.of(new MetricCollectingServerInterceptor(registry), new Admission(limiter, Set.copyOf(methods))),
        config.shutdownDrain(),
        config.shutdownGrace());
    server.start();
    transport.watchFiles();
    // The hot-key log check: microseconds every slot, on the timer thread (which it never blocks for long).
    scheduler.scheduleAtFixedRate(() -> logHotKeys(hotKeys), HotKeys.SLOT.toMillis(), HotKeys.SLOT.toMillis(),
        TimeUnit.MILLISECONDS);
    MetricsServer metrics = config.metricsPort() >= 0
        ? MetricsServer.start(ServiceConfig.listenAddress(config.metricsBindAddress(), config.metricsPort()), registry)
        : null;
    Listening.log(config.serviceName(), config.grpcBindAddress(), server.port(), transport,
        metrics == null ? "none" : config.metricsBindAddress() + ":" + metrics.port());
    log.info("event=started service=" + config.serviceName() + " grpc_port=" + server.port()
        + " metrics_port=" + (metrics == null ? -1 : metrics.port())
        + " startup_ms=" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    return new ServiceProcess(server, metrics, dynamo, scheduler, transport, resources);
  }

  private static void logHotKeys(HotKeys hotKeys) {
    try {
      hotKeys.logHotKeys();
    } catch (RuntimeException e) { // a periodic task that throws is never run again
      log.log(Level.WARNING, "event=hot_key_check_failed", e);
    }
  }

  public int grpcPort() {
    return server.port();
  }

  public int metricsPort() {
    return metrics.port();
  }

  public ServiceServer server() {
    return server;
  }

  /** Blocks the calling thread (main's) until the server has stopped. */
  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  /**
   * Stops as {@link ServiceServer#stop} does (NOT_SERVING, the drain delay, then in-flight calls get the
   * grace period), then releases the metrics port, the timer and the DynamoDB client.
   */
  @Override
  public void close() {
    server.stop();
    if (metrics != null) {
      metrics.close();
    }
    scheduler.shutdownNow();
    resources.closeAll();
    transport.close();
    dynamo.close();
    log.info("event=stopped");
  }
}
