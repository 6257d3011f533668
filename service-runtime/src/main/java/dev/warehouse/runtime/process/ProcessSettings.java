package dev.warehouse.runtime.process;

import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.trace.TraceSettings;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;

/**
 * What every process's ports, transport and stop are made of, whatever it serves: the part of a service's or the
 * gateway's settings that {@link ServerProcess} reads.
 *
 * @param name               the process's name in logs and metrics ({@code inventory-service}, {@code gateway})
 * @param grpcBindAddress    the gRPC port's address ({@code GRPC_BIND_ADDRESS}); {@link #ALL_INTERFACES} is every one
 * @param grpcPort           the gRPC port ({@code GRPC_PORT}); 0 picks a free one
 * @param metricsBindAddress the metrics and health ports' address ({@code METRICS_BIND_ADDRESS})
 * @param metricsPort        the Prometheus endpoint's port ({@code METRICS_PORT}); 0 picks a free one, below 0 serves none
 * @param healthPort         a plaintext port serving only {@code grpc.health.v1.Health} ({@code HEALTH_PORT})
 * @param tls                how the gRPC port is secured and whom it admits ({@code GRPC_TLS_MODE}, {@code TLS_*})
 * @param maxStreams         calls one connection may have open at once ({@code ADMISSION_MAX_STREAMS})
 * @param shutdownDrain      how long a stop keeps serving after health turns NOT_SERVING ({@code SHUTDOWN_DRAIN_MS})
 * @param shutdownGrace      how long a stop then waits for in-flight calls ({@code SHUTDOWN_GRACE_SECONDS})
 * @param tracing            what becomes of its calls' spans ({@code OTEL_*}, {@code TRACE_TRUST_INCOMING})
 */
public record ProcessSettings(
    String name,
    String grpcBindAddress,
    int grpcPort,
    String metricsBindAddress,
    int metricsPort,
    Optional<Integer> healthPort,
    TlsConfig tls,
    int maxStreams,
    Duration shutdownDrain,
    Duration shutdownGrace,
    TraceSettings tracing) {

  /** Every interface: a container's port must be reachable from the others. */
  public static final String ALL_INTERFACES = "0.0.0.0";
  /**
   * Three of the gateway's 500 ms health periods: a peer that learns health at that rate has seen
   * NOT_SERVING after two, and one is to spare.
   */
  public static final Duration DEFAULT_SHUTDOWN_DRAIN = Duration.ofMillis(1500);
  public static final Duration DEFAULT_SHUTDOWN_GRACE = Duration.ofSeconds(30);

  /** Where to listen: {@code 0.0.0.0} is the wildcard address (IPv4 and IPv6), anything else that address. */
  public static InetSocketAddress listenAddress(String bindAddress, int port) {
    return bindAddress.equals(ALL_INTERFACES) ? new InetSocketAddress(port) : new InetSocketAddress(bindAddress, port);
  }

  InetSocketAddress grpcAddress() {
    return listenAddress(grpcBindAddress, grpcPort);
  }
}
