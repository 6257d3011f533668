package dev.warehouse.runtime.process;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.runtime.log.CallFields;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.routing.RouteTable;
import io.grpc.BindableService;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoServiceDescriptorSupplier;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gRPC server with the application's services, the standard health service and server reflection
 * (v1 and v1alpha, so grpcurl can list, describe and call every method without .proto files).
 * Takes a {@link ServerBuilder} so tests can hand it any transport. Every service must declare a
 * route for each of its RPCs, or the server refuses to start; only the services named in
 * {@link #ROUTE_EXEMPT} read no table and declare none.
 */
public final class GrpcServer {

  private static final Logger log = LoggerFactory.getLogger(GrpcServer.class);

  /**
   * The services whose RPCs read no table, and so have no route: {@code warehouse.admin.v1.AdminService}
   * answers from what the process itself observed. Named one by one, so that the route check still
   * holds every other service, and a new exemption is a visible decision.
   */
  public static final Set<String> ROUTE_EXEMPT = Set.of(AdminServiceGrpc.SERVICE_NAME);

  private final Server server;
  private final HealthStatusManager health = new HealthStatusManager();
  /** The plaintext, health-only port, when one is asked for ({@link #serveHealthOn}). */
  private Server healthServer;
  private final List<String> serviceNames = new ArrayList<>();
  private final Duration shutdownDrain;
  private final Duration shutdownGrace;
  private final Sleeper sleeper;

  /** Waits out the drain delay; tests replace it to hold the drain open for as long as they need. */
  @FunctionalInterface
  interface Sleeper {
    void sleep(Duration duration) throws InterruptedException;
  }

  /**
   * @param shutdownDrain how long {@link #stop} keeps serving after turning NOT_SERVING, so that
   *                      balancers stop sending before new calls are refused
   * @param shutdownGrace how long {@link #stop} then waits for in-flight calls before cancelling them
   */
  public GrpcServer(ServerBuilder<?> builder, List<BindableService> services,
      List<ServerInterceptor> interceptors, Duration shutdownDrain, Duration shutdownGrace) {
    this(builder, services, interceptors, shutdownDrain, shutdownGrace, duration -> Thread.sleep(duration.toMillis()));
  }

  GrpcServer(ServerBuilder<?> builder, List<BindableService> services, List<ServerInterceptor> interceptors,
      Duration shutdownDrain, Duration shutdownGrace, Sleeper sleeper) {
    this.shutdownDrain = shutdownDrain;
    this.shutdownGrace = shutdownGrace;
    this.sleeper = sleeper;
    // Added last, so run first: every interceptor and handler after it can name the call in its log lines.
    builder.intercept(CallFields.interceptor());
    for (BindableService service : services) {
      ServerServiceDefinition definition = service.bindService();
      if (!ROUTE_EXEMPT.contains(definition.getServiceDescriptor().getName())) {
        requireRoutes(definition);
      }
      serviceNames.add(definition.getServiceDescriptor().getName());
      builder.addService(ServerInterceptors.intercept(definition, interceptors));
    }
    this.server = builder
        .addService(health.getHealthService())
        .addService(ProtoReflectionServiceV1.newInstance())
        .addService(reflectionV1Alpha())
        .build();
  }

  @SuppressWarnings("deprecation") // v1alpha is what many grpcurl builds still ask for first
  private static BindableService reflectionV1Alpha() {
    return ProtoReflectionService.newInstance();
  }

  private static void requireRoutes(ServerServiceDefinition definition) {
    Object schema = definition.getServiceDescriptor().getSchemaDescriptor();
    if (!(schema instanceof ProtoServiceDescriptorSupplier supplier)) {
      throw new IllegalStateException(definition.getServiceDescriptor().getName() + " has no protobuf descriptor");
    }
    RouteTable.of(supplier.getServiceDescriptor());
  }

  /**
   * Also serves {@code grpc.health.v1.Health}, and nothing else, in plaintext on {@code address}: kubelet's native
   * gRPC probe speaks no TLS, and a probe that starts a JVM costs far more than a call (docs/kubernetes.md). It tells
   * only whether the process serves, the same statuses as the main port, which turn NOT_SERVING as it stops.
   * Call before {@link #start}.
   */
  public GrpcServer serveHealthOn(InetSocketAddress address) {
    healthServer = NettyServerBuilder.forAddress(address, InsecureServerCredentials.create())
        .addService(health.getHealthService())
        .directExecutor()
        .maxInboundMessageSize(1024)
        .maxConcurrentCallsPerConnection(16)
        .build();
    return this;
  }

  /** The health-only port, or -1 where none is served. */
  public int healthPort() {
    return healthServer == null ? -1 : healthServer.getPort();
  }

  public GrpcServer start() throws IOException {
    server.start();
    if (healthServer != null) {
      healthServer.start();
    }
    for (String name : serviceNames) {
      health.setStatus(name, ServingStatus.SERVING);
    }
    health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.SERVING);
    return this;
  }

  public int port() {
    return server.getPort();
  }

  public HealthStatusManager health() {
    return health;
  }

  /**
   * Graceful stop, in four steps: health turns NOT_SERVING, so that balancers stop sending; calls are
   * still served for the drain delay, since whoever learns of it late (a health check's period, an L4
   * balancer's or DNS's endpoint list, a call already on its way) may send a while longer; then new
   * calls and connections are refused; in-flight calls get up to the grace period to finish, then the
   * rest are cancelled.
   *
   * <p>Blocks the calling thread for the drain delay and up to the grace period: call it from a
   * shutdown hook or a test, never from an event loop or a gRPC handler.
   */
  public void stop() {
    health.enterTerminalState();
    try {
      if (!shutdownDrain.isZero()) {
        Events.info(log, "draining").addKeyValue("drain_ms", shutdownDrain.toMillis()).log();
        sleeper.sleep(shutdownDrain);
      }
      server.shutdown();
      if (!server.awaitTermination(shutdownGrace.toMillis(), TimeUnit.MILLISECONDS)) {
        Events.warn(log, "shutdown_forced").addKeyValue("grace_ms", shutdownGrace.toMillis()).log();
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    } finally {
      // Last: until the main port has stopped, probes keep hearing NOT_SERVING rather than a refused connection.
      if (healthServer != null) {
        healthServer.shutdownNow();
        try {
          healthServer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }
}
