package dev.warehouse.gateway;

import com.google.protobuf.Descriptors;
import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.gateway.admin.GatewayAdminEndpoint;
import dev.warehouse.gateway.auth.GatewayAccess;
import dev.warehouse.gateway.backend.Backend;
import dev.warehouse.gateway.backend.BackendHealthMonitor;
import dev.warehouse.gateway.backend.ForwardingService;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.discovery.AddressLookup;
import dev.warehouse.runtime.discovery.BackendAddress;
import dev.warehouse.runtime.discovery.BackendInstances;
import dev.warehouse.runtime.discovery.EventLoops;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.metrics.MetricsRegistries;
import dev.warehouse.runtime.metrics.MetricsServer;
import dev.warehouse.runtime.peer.PeerCalls;
import dev.warehouse.runtime.server.DaemonThreads;
import dev.warehouse.runtime.server.Listening;
import dev.warehouse.runtime.server.ServiceServer;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TransportSecurity;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.grpc.BindableService;
import io.grpc.ChannelCredentials;
import io.grpc.ServiceDescriptor;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.protobuf.ProtoServiceDescriptorSupplier;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running gateway, wired by hand; {@code main} and the tests both start it here. It forwards the
 * inventory and order contracts to their backends, and serves {@code warehouse.admin.v1.AdminService}
 * itself by asking every backend instance ({@link GatewayAdminEndpoint}).
 */
public final class GatewayProcess implements AutoCloseable {

  /**
   * Calls in the circuit breaker's window; half failing (UNAVAILABLE, or the deadline passing) opens
   * it. What counts, and what is ignored, is {@link PeerCalls}' to say.
   */
  public static final int CIRCUIT_WINDOW = 10;
  public static final int CIRCUIT_MIN_CALLS = 5;

  /** The backends' names: their circuit breakers', and the {@code service} of their hot keys. */
  public static final String INVENTORY_SERVICE = "inventory-service";
  public static final String ORDER_SERVICE = "order-service";

  private static final Logger log = LoggerFactory.getLogger(GatewayProcess.class);

  private final ServiceServer server;
  private final MetricsServer metrics;
  private final List<Backend> backends;
  private final List<BackendInstances> instances;
  private final ScheduledExecutorService resolver;
  private final BackendHealthMonitor monitor;
  private final GatewayAdminEndpoint admin;
  private final EventLoopGroup eventLoops;
  private final TransportSecurity transport;
  private final GatewayAccess access;

  private GatewayProcess(ServiceServer server, MetricsServer metrics, List<Backend> backends,
      List<BackendInstances> instances, ScheduledExecutorService resolver, BackendHealthMonitor monitor,
      GatewayAdminEndpoint admin, EventLoopGroup eventLoops, TransportSecurity transport, GatewayAccess access) {
    this.server = server;
    this.metrics = metrics;
    this.backends = backends;
    this.instances = instances;
    this.resolver = resolver;
    this.monitor = monitor;
    this.admin = admin;
    this.eventLoops = eventLoops;
    this.transport = transport;
    this.access = access;
  }

  /**
   * A contract the gateway forwards, to the backend of that name (its circuit breaker's, and the {@code service}
   * of its hot keys), at the configured addresses.
   */
  record Forwarded(String backend, ServiceDescriptor service, Function<GatewayConfig, List<String>> addresses) {
    static Descriptors.ServiceDescriptor proto(ServiceDescriptor service) {
      return ((ProtoServiceDescriptorSupplier) service.getSchemaDescriptor()).getServiceDescriptor();
    }
  }

  /** What the gateway forwards: adding a backend is a line here and its addresses' setting. */
  static final List<Forwarded> FORWARDED = List.of(
      new Forwarded(INVENTORY_SERVICE, InventoryServiceGrpc.getServiceDescriptor(), GatewayConfig::inventoryAddresses),
      new Forwarded(ORDER_SERVICE, OrderServiceGrpc.getServiceDescriptor(), GatewayConfig::orderAddresses));

  /** Every service the gateway's port serves: those it forwards, its admin endpoint, health and reflection. */
  @SuppressWarnings("deprecation") // reflection v1alpha: ServiceServer serves it for older grpcurl builds
  public static List<ServiceDescriptor> servedServices() {
    return Stream.concat(FORWARDED.stream().map(Forwarded::service), Stream.of(AdminServiceGrpc.getServiceDescriptor(),
        HealthGrpc.getServiceDescriptor(), io.grpc.reflection.v1.ServerReflectionGrpc.getServiceDescriptor(),
        io.grpc.reflection.v1alpha.ServerReflectionGrpc.getServiceDescriptor())).toList();
  }

  public static GatewayProcess start(GatewayConfig config) throws IOException {
    return start(config, AddressLookup.SYSTEM);
  }

  /** The gateway, looking its backends' names up with {@code lookup} (tests change its answers as they go). */
  static GatewayProcess start(GatewayConfig config, AddressLookup lookup) throws IOException {
    long started = System.nanoTime();
    config.fields().addTo(Events.info(log, "starting")).log();
    // Netty's native libraries load on a second thread while this one reads the certificates, the policy and
    // the keys; the JVM's metrics are bound there once the gateway serves (as ServiceProcess does).
    ExecutorService aside = Executors.newFixedThreadPool(1, DaemonThreads.named("start-up"));
    try {
      aside.submit(() -> EventLoops.loadNatives(
          config.tls().serverMode() != TlsMode.PLAINTEXT
              || config.backendTls().values().stream().anyMatch(channel -> channel.mode() != TlsMode.PLAINTEXT)));
      return start(config, lookup, started, aside);
    } finally {
      aside.shutdown(); // its thread ends once its tasks have
    }
  }

  private static GatewayProcess start(GatewayConfig config, AddressLookup lookup, long started, ExecutorService aside)
      throws IOException {
    // One identity and CA for the client port and the backend channels (the admin endpoint's too).
    TransportSecurity transport = TransportSecurity.load(config.tls());
    GatewayAccess access = GatewayAccess.start(config.auth(), Clock.systemUTC(), servedServices(),
        Stream.concat(FORWARDED.stream().map(Forwarded::service), Stream.of(AdminServiceGrpc.getServiceDescriptor()))
            .map(Forwarded::proto).toList());
    PrometheusMeterRegistry registry = MetricsRegistries.withoutJvmMetrics("gateway");
    CircuitBreakerRegistry circuits = CircuitBreakerRegistry.of(
        PeerCalls.breakerConfig(CIRCUIT_WINDOW, CIRCUIT_MIN_CALLS, config.circuitOpenFor()));
    TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(circuits).bindTo(registry);

    EventLoopGroup eventLoops = EventLoops.group(Runtime.getRuntime().availableProcessors());
    // One list of current instances per backend, looked up again every period: the balanced channels and
    // the admin endpoint both follow it.
    ScheduledExecutorService resolver =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("backend-resolver"));
    List<BackendInstances> instances = new ArrayList<>();
    List<Backend> backends = new ArrayList<>();
    List<BindableService> forwarding = new ArrayList<>();
    Map<String, ChannelCredentials> credentials = new HashMap<>();
    for (Forwarded route : FORWARDED) {
      // Each backend's channels accept only its own service's identities.
      ChannelCredentials backendCredentials = transport.channelCredentials(config.backendTls(route.backend()));
      credentials.put(route.backend(), backendCredentials);
      BackendInstances routeInstances = new BackendInstances(route.backend(),
          BackendAddress.parseAll(route.addresses().apply(config)),
          lookup, config.resolvePeriod(), resolver, Clock.systemUTC()).start();
      Backend backend = new Backend(Forwarded.proto(route.service()), routeInstances, circuits.circuitBreaker(route.backend()),
          config.admission(), config.defaultDeadline(), config.minForwardBudget(), registry, eventLoops, backendCredentials);
      instances.add(routeInstances);
      backends.add(backend);
      forwarding.add(new ForwardingService(route.service(), backend));
    }

    // Not forwarded: ListHotKeys asks every instance and adds their counts up.
    GatewayAdminEndpoint admin = new GatewayAdminEndpoint(instances, eventLoops,
        config.defaultDeadline(), config.minForwardBudget(), credentials);

    // Forwarding never blocks: the event loop hands each call straight to its backend call. Access control
    // wraps every service of the port (reflection too), before the per-service metrics.
    ServiceServer server = new ServiceServer(
        access.install(transport.serverBuilder(ServiceConfig.listenAddress(config.grpcBindAddress(), config.grpcPort()))
            .bossEventLoopGroup(eventLoops)
            .workerEventLoopGroup(eventLoops)
            .channelType(EventLoops.serverChannel())
            // A client's calls past this wait at the client: what one connection floods is held there.
            .maxConcurrentCallsPerConnection(config.admission().maxStreams())
            .directExecutor()),
        Stream.concat(forwarding.stream(), Stream.of(admin)).toList(),
        List.of(new MetricCollectingServerInterceptor(registry)),
        config.shutdownDrain(),
        config.shutdownGrace());
    config.healthPort().ifPresent(port ->
        server.serveHealthOn(ServiceConfig.listenAddress(config.metricsBindAddress(), port)));
    server.start();
    transport.watchFiles();
    BackendHealthMonitor monitor = new BackendHealthMonitor(backends, server.health());
    MetricsServer metrics = MetricsServer.start(
        ServiceConfig.listenAddress(config.metricsBindAddress(), config.metricsPort()), registry);
    aside.submit(() -> MetricsRegistries.bindJvmMetrics(registry));
    Listening.log("gateway", config.grpcBindAddress(), server.port(), transport,
        config.metricsBindAddress() + ":" + metrics.port(),
        config.backendTlsFields());
    Events.info(log, "started").addKeyValue("service", "gateway").addKeyValue("grpc_port", server.port())
        .addKeyValue("metrics_port", metrics.port())
        .addKeyValue("startup_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).log();
    return new GatewayProcess(server, metrics, List.copyOf(backends), List.copyOf(instances), resolver, monitor, admin, eventLoops, transport, access);
  }

  public int grpcPort() {
    return server.port();
  }

  public int metricsPort() {
    return metrics.port();
  }

  /** The circuit breaker of one backend, by its name ({@code inventory-service}, {@code order-service}). */
  public CircuitBreaker circuitBreaker(String name) {
    return backends.stream().map(Backend::circuitBreaker).filter(breaker -> breaker.getName().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no backend named " + name));
  }

  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  /**
   * Stops as {@link ServiceServer#stop} does (NOT_SERVING, the drain delay, then in-flight calls get the
   * grace period), then closes the backend channels and the metrics port.
   */
  @Override
  public void close() {
    server.stop();
    monitor.close();
    backends.forEach(Backend::close);
    admin.close();
    instances.forEach(BackendInstances::close);
    resolver.shutdownNow();
    eventLoops.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
    metrics.close();
    transport.close();
    access.close();
    Events.info(log, "stopped").addKeyValue("service", "gateway").log();
  }
}
