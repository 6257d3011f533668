package dev.warehouse.runtime.service;

import dev.warehouse.runtime.admin.AdminGrpcEndpoint;
import dev.warehouse.runtime.admission.Admission;
import dev.warehouse.runtime.admission.RouteLimiter;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.discovery.EventLoops;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.dynamo.DynamoClients;
import dev.warehouse.runtime.dynamo.DynamoMetrics;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.TableSetup;
import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.metrics.MetricsRegistries;
import dev.warehouse.runtime.metrics.MetricsServer;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.routing.RouteTable;
import dev.warehouse.runtime.scope.CallerScopeCheck;
import dev.warehouse.runtime.server.DaemonThreads;
import dev.warehouse.runtime.server.Listening;
import dev.warehouse.runtime.server.ServiceServer;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TransportSecurity;
import io.grpc.BindableService;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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

  private static final Logger log = LoggerFactory.getLogger(ServiceProcess.class);

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
    config.fields().addTo(Events.info(log, "starting")).log();
    // What waits for nothing else runs on a second thread while this one reads the certificates and builds the
    // server: Netty's native libraries, and the DynamoDB client (the AWS SDK's classes, its event loop, the
    // credential lookup), so a second core shortens the start. The JVM's metrics are bound there once the
    // process serves: nothing reads them before the first scrape (docs/performance-log.md, start-up).
    ExecutorService aside = Executors.newFixedThreadPool(2, DaemonThreads.named("start-up"));
    Future<DynamoDbAsyncClient> dynamoBuilt = null;
    try {
      aside.submit(() -> EventLoops.loadNatives(config.tls().serverMode() != TlsMode.PLAINTEXT));
      PrometheusMeterRegistry registry = MetricsRegistries.withoutJvmMetrics(config.serviceName());
      Clock clock = Clock.systemUTC();
      HotKeys hotKeys = new HotKeys(clock, registry, config.hotKeyLogShare());
      List<ExecutionInterceptor> interceptors = new ArrayList<>(sdkInterceptors);
      interceptors.add(new DynamoMetrics(registry, hotKeys));
      dynamoBuilt = aside.submit(() -> DynamoClients.create(config, interceptors));
      // Unreadable certificates fail the start here, before the server is built (the client is closed below).
      TransportSecurity transport = TransportSecurity.load(config.tls());
      NettyServerBuilder serverBuilder =
          transport.serverBuilder(ServiceConfig.listenAddress(config.grpcBindAddress(), config.grpcPort()));
      PageTokenCodec pageTokens = config.pageTokenKey()
          .map(key -> new PageTokenCodec(key, config.acceptedPageTokenKeys())).orElseGet(() -> {
        Events.warn(log, "page_token_key_random")
            .addKeyValue("detail", "set PAGE_TOKEN_KEY so instances accept each other's page tokens").log();
        return PageTokenCodec.withRandomKey();
      });
      DynamoDbAsyncClient dynamo = built(dynamoBuilt);
      if (config.createTable()) {
        TableSetup.ensureTable(dynamo, config.tableName(), Duration.ofMinutes(2));
      }
      ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("timer"));
      DynamoStore store = new DynamoStore(dynamo, config.tableName(),
          new DynamoCalls(scheduler, registry, config.dynamoCallTimeout()), pageTokens, registry);
      ServiceContext.Resources resources = new ServiceContext.Resources();
      ServiceContext context = new ServiceContext(config, dynamo, store, registry, pageTokens, clock, scheduler,
          transport, resources);
      List<BindableService> served = new ArrayList<>(services.apply(context));
      List<io.grpc.ServiceDescriptor> descriptors = served.stream()
          .map(service -> service.bindService().getServiceDescriptor()).toList();
      // Each of the service's own methods has its concurrency limit, a slot taken at a call's first store call.
      List<String> methods = descriptors.stream().flatMap(service -> service.getMethods().stream())
          .map(io.grpc.MethodDescriptor::getFullMethodName).toList();
      RouteLimiter limiter = new RouteLimiter(config.serviceName(),
          methods.stream().map(io.grpc.MethodDescriptor::extractBareMethodName).toList(), config.admission(), registry);
      CallerScopeCheck scopes = new CallerScopeCheck(RouteTable.declared(descriptors),
          config.tls().serverMode() == TlsMode.MTLS ? Optional.of(config.tls().trustedPeers()) : Optional.empty());
      served.add(new AdminGrpcEndpoint(config.serviceName(), hotKeys));

      // Handlers run on the gRPC I/O threads: they never block (the DynamoDB client is asynchronous, and
      // its credentials were resolved before serving and refresh in the background), and a hand-off to a
      // handler pool added to every call's latency in the layer benchmark (docs/performance-log.md).
      ServiceServer server = new ServiceServer(
          serverBuilder.directExecutor().maxConcurrentCallsPerConnection(config.admission().maxStreams()),
          served,
          List.of(new MetricCollectingServerInterceptor(registry), scopes, new Admission(limiter, Set.copyOf(methods))),
          config.shutdownDrain(),
          config.shutdownGrace());
      config.healthPort().ifPresent(port ->
          server.serveHealthOn(ServiceConfig.listenAddress(config.metricsBindAddress(), port)));
      server.start();
      transport.watchFiles();
      // The hot-key log check: microseconds every slot, on the timer thread (which it never blocks for long).
      scheduler.scheduleAtFixedRate(() -> logHotKeys(hotKeys), HotKeys.SLOT.toMillis(), HotKeys.SLOT.toMillis(),
          TimeUnit.MILLISECONDS);
      MetricsServer metrics = config.metricsPort() >= 0
          ? MetricsServer.start(ServiceConfig.listenAddress(config.metricsBindAddress(), config.metricsPort()), registry)
          : null;
      aside.submit(() -> MetricsRegistries.bindJvmMetrics(registry));
      Listening.log(config.serviceName(), config.grpcBindAddress(), server.port(), transport,
          metrics == null ? "none" : config.metricsBindAddress() + ":" + metrics.port());
      Events.info(log, "started").addKeyValue("service", config.serviceName()).addKeyValue("grpc_port", server.port())
          .addKeyValue("metrics_port", metrics == null ? -1 : metrics.port())
          .addKeyValue("startup_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).log();
      return new ServiceProcess(server, metrics, dynamo, scheduler, transport, resources);
    } catch (IOException | RuntimeException | Error e) {
      closeQuietly(dynamoBuilt);
      throw e;
    } finally {
      aside.shutdown(); // its threads end once their tasks have
    }
  }

  /** The client built on the start-up thread; its failure is this thread's. */
  private static DynamoDbAsyncClient built(Future<DynamoDbAsyncClient> client) {
    try {
      return client.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the DynamoDB client was built", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  /** A start that failed closes the client it had built, if it had, whenever it finishes. */
  private static void closeQuietly(Future<DynamoDbAsyncClient> client) {
    if (client == null) {
      return;
    }
    try {
      client.get(1, TimeUnit.MINUTES).close();
    } catch (Exception | Error ignored) {
      // it never got built, or its close failed: the process is failing its start either way
    }
  }

  private static void logHotKeys(HotKeys hotKeys) {
    try {
      hotKeys.logHotKeys();
    } catch (RuntimeException e) { // a periodic task that throws is never run again
      Events.warn(log, "hot_key_check_failed").setCause(e).log();
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
    Events.info(log, "stopped").log();
  }
}
