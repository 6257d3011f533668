package dev.warehouse.gateway.backend;

import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import dev.warehouse.routing.v1.RouteProto;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The gRPC service config of a backend channel (round robin over the instances that pass their
 * health check), and which calls are safe to repeat on another instance: the reads of the retrieval
 * map (A1-A6) and the writes that carry a {@code request_id}.
 */
public final class BackendServiceConfig {

  /** Attempts of one call through the gateway, first try included. */
  public static final int MAX_ATTEMPTS = 2;

  private BackendServiceConfig() {}

  public static Map<String, Object> of(ServiceDescriptor service) {
    return Map.of(
        "loadBalancingConfig", List.of(Map.of("round_robin", Map.of())),
        "healthCheckConfig", Map.of("serviceName", service.getFullName()));
  }

  /** Full names ({@code package.Service/Method}) of the calls the gateway may retry. */
  public static Set<String> retryableFullNames(ServiceDescriptor service) {
    return retryableMethods(service).stream()
        .map(m -> service.getFullName() + "/" + m.getName())
        .collect(Collectors.toUnmodifiableSet());
  }

  /** Reads (route ids A…) and writes made idempotent by a request id. */
  public static List<MethodDescriptor> retryableMethods(ServiceDescriptor service) {
    return service.getMethods().stream()
        .filter(m -> m.getOptions().getExtension(RouteProto.route).getPatternId().startsWith("A")
            || m.getInputType().findFieldByName("request_id") != null)
        .toList();
  }
}
