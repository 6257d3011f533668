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
import dev.warehouse.runtime.discovery.AddressLookup;
import dev.warehouse.runtime.discovery.BackendAddress;
import dev.warehouse.runtime.discovery.BackendInstances;
import dev.warehouse.runtime.discovery.EventLoops;
import dev.warehouse.runtime.peer.PeerCalls;
import dev.warehouse.runtime.process.ProcessContext;
import dev.warehouse.runtime.process.ProcessPlugin;
import dev.warehouse.runtime.process.Resources;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.threads.DaemonThreads;
import dev.warehouse.runtime.tls.TlsMode;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.grpc.BindableService;
import io.grpc.ChannelCredentials;
import io.grpc.ServiceDescriptor;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.protobuf.ProtoServiceDescriptorSupplier;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

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

  private final ServerProcess process;
  private final List<Backend> backends;
  private final GatewayAccess access;

  private GatewayProcess(ServerProcess process, List<Backend> backends, GatewayAccess access) {
    this.process = process;
    this.backends = backends;
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
  @SuppressWarnings("deprecation") // reflection v1alpha: GrpcServer serves it for older grpcurl builds
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
    Forwarding forwarding = new Forwarding(config, lookup);
    ServerProcess process = ServerProcess.start(config.process(), config.fields(),
        config.backendTls().values().stream().anyMatch(channel -> channel.mode() != TlsMode.PLAINTEXT), forwarding);
    return new GatewayProcess(process, List.copyOf(forwarding.backends), forwarding.access);
  }

  /** What the gateway plugs into the process: access control, a channel per backend, and its admin endpoint. */
  private static final class Forwarding implements ProcessPlugin {
    private final GatewayConfig config;
    private final AddressLookup lookup;
    private final List<Backend> backends = new ArrayList<>();
    private GatewayAccess access;

    Forwarding(GatewayConfig config, AddressLookup lookup) {
      this.config = config;
      this.lookup = lookup;
    }

    @Override
    public Plugged plug(ProcessContext process) throws IOException {
      Resources resources = process.resources();
      access = resources.closeOnStop(GatewayAccess.start(config.auth(), process.clock(), servedServices(),
          Stream.concat(FORWARDED.stream().map(Forwarded::service), Stream.of(AdminServiceGrpc.getServiceDescriptor()))
              .map(Forwarded::proto).toList(), process.registry()));
      CircuitBreakerRegistry circuits = CircuitBreakerRegistry.of(
          PeerCalls.breakerConfig(CIRCUIT_WINDOW, CIRCUIT_MIN_CALLS, config.circuitOpenFor()));
      TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(circuits).bindTo(process.registry());

      EventLoopGroup eventLoops = EventLoops.group(Runtime.getRuntime().availableProcessors());
      resources.closeOnStop(() -> eventLoops.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly());
      // One list of current instances per backend, looked up again every period: the balanced channels and
      // the admin endpoint both follow it.
      ScheduledExecutorService resolver =
          Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("backend-resolver"));
      resources.closeOnStop(resolver::shutdownNow);
      List<BackendInstances> instances = new ArrayList<>();
      List<BindableService> forwarding = new ArrayList<>();
      Map<String, ChannelCredentials> credentials = new HashMap<>();
      for (Forwarded route : FORWARDED) {
        // Each backend's channels accept only its own service's identities.
        ChannelCredentials backendCredentials =
            process.transport().channelCredentials(config.backendTls(route.backend()));
        credentials.put(route.backend(), backendCredentials);
        BackendInstances routeInstances = resources.closeOnStop(new BackendInstances(route.backend(),
            BackendAddress.parseAll(route.addresses().apply(config)),
            lookup, config.resolvePeriod(), resolver, process.clock()).start());
        Backend backend = resources.closeOnStop(new Backend(Forwarded.proto(route.service()), routeInstances,
            circuits.circuitBreaker(route.backend()), config.admission(), config.defaultDeadline(),
            config.minForwardBudget(), process.registry(), eventLoops, backendCredentials,
            process.tracing().clientInterceptor()));
        instances.add(routeInstances);
        backends.add(backend);
        forwarding.add(new ForwardingService(route.service(), backend));
      }

      // Not forwarded: ListHotKeys asks every instance and adds their counts up.
      GatewayAdminEndpoint admin = resources.closeOnStop(new GatewayAdminEndpoint(instances, eventLoops,
          config.defaultDeadline(), config.minForwardBudget(), credentials));

      // Forwarding never blocks: the event loop hands each call straight to its backend call. Access control
      // wraps every service of the port (reflection too), before the per-service metrics.
      return new Plugged(Stream.concat(forwarding.stream(), Stream.of(admin)).toList(), List.of(),
          builder -> access.install(builder.bossEventLoopGroup(eventLoops).workerEventLoopGroup(eventLoops)
              .channelType(EventLoops.serverChannel())),
          config.backendTlsFields(),
          server -> resources.closeOnStop(new BackendHealthMonitor(backends, server.health())));
    }
  }

  /** The process it runs in, for {@code main}'s serve-and-stop. */
  ServerProcess process() {
    return process;
  }

  public int grpcPort() {
    return process.grpcPort();
  }

  public int metricsPort() {
    return process.metricsPort();
  }

  /** The circuit breaker of one backend, by its name ({@code inventory-service}, {@code order-service}). */
  public CircuitBreaker circuitBreaker(String name) {
    return backends.stream().map(Backend::circuitBreaker).filter(breaker -> breaker.getName().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no backend named " + name));
  }

  public void awaitTermination() throws InterruptedException {
    process.awaitTermination();
  }

  /** Its access control: the policy, the callers' keys, and the audit trail it owns and drains at the stop. */
  public GatewayAccess access() {
    return access;
  }

  /**
   * Stops as {@link ServerProcess#close} does: NOT_SERVING, the drain delay, in-flight calls get the grace period;
   * then the health monitor, the backend channels, the audit trail's last lines and the metrics port.
   */
  @Override
  public void close() {
    process.close();
  }
}
