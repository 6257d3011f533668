package dev.warehouse.gateway.backend;

import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import dev.warehouse.routing.v1.RouteProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The gRPC service config of a backend channel: round robin over the instances that pass their
 * health check, and retries on UNAVAILABLE (on another instance) for the calls that are safe to
 * repeat: the reads of the retrieval map (A1-A6) and the writes that carry a {@code request_id}.
 */
public final class BackendServiceConfig {

  /** Attempts of one call through the gateway, first try included. */
  public static final int MAX_ATTEMPTS = 2;

  private BackendServiceConfig() {}

  public static Map<String, Object> of(ServiceDescriptor service) {
    List<Map<String, Object>> retryable = new ArrayList<>();
    for (MethodDescriptor method : retryableMethods(service)) {
      retryable.add(Map.of("service", service.getFullName(), "method", method.getName()));
    }
    return Map.of(
        "loadBalancingConfig", List.of(Map.of("round_robin", Map.of())),
        "healthCheckConfig", Map.of("serviceName", service.getFullName()),
        "methodConfig", List.of(Map.of(
            "name", retryable,
            "retryPolicy", Map.of(
                "maxAttempts", (double) MAX_ATTEMPTS,
                "initialBackoff", "0.01s",
                "maxBackoff", "0.1s",
                "backoffMultiplier", 2.0,
                "retryableStatusCodes", List.of("UNAVAILABLE")))));
  }

  /** Reads (route ids A…) and writes made idempotent by a request id. */
  public static List<MethodDescriptor> retryableMethods(ServiceDescriptor service) {
    return service.getMethods().stream()
        .filter(m -> m.getOptions().getExtension(RouteProto.route).getPatternId().startsWith("A")
            || m.getInputType().findFieldByName("request_id") != null)
        .toList();
  }
}
