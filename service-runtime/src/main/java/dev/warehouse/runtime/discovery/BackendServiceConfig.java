package dev.warehouse.runtime.discovery;

import com.google.protobuf.DescriptorProtos.MethodOptions.IdempotencyLevel;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The gRPC service config of a backend channel (round robin over the instances that pass their
 * health check), and which calls are safe to repeat on another instance: those whose contract
 * declares protobuf's standard {@code idempotency_level} as {@code NO_SIDE_EFFECTS} (the reads) or
 * {@code IDEMPOTENT} (the writes made safe to repeat by their {@code request_id}). A method that
 * declares neither ({@code IDEMPOTENCY_UNKNOWN}) is never retried.
 */
public final class BackendServiceConfig {

  private BackendServiceConfig() {}

  public static Map<String, Object> of(ServiceDescriptor service) {
    return Map.of(
        "loadBalancingConfig", List.of(Map.of("round_robin", Map.of())),
        "healthCheckConfig", Map.of("serviceName", service.getFullName()));
  }

  /** Full names ({@code package.Service/Method}) of the calls that may be retried. */
  public static Set<String> retryableFullNames(ServiceDescriptor service) {
    return retryableMethods(service).stream()
        .map(m -> service.getFullName() + "/" + m.getName())
        .collect(Collectors.toUnmodifiableSet());
  }

  /**
   * The writes: every method not declared {@code NO_SIDE_EFFECTS}, the idempotent ones included (a
   * repeated AdjustStock changes nothing, the first one does). What the audit trail records.
   */
  public static List<MethodDescriptor> writeMethods(ServiceDescriptor service) {
    return service.getMethods().stream()
        .filter(m -> m.getOptions().getIdempotencyLevel() != IdempotencyLevel.NO_SIDE_EFFECTS).toList();
  }

  /** The methods declared {@code NO_SIDE_EFFECTS} or {@code IDEMPOTENT}. */
  public static List<MethodDescriptor> retryableMethods(ServiceDescriptor service) {
    return service.getMethods().stream().filter(BackendServiceConfig::isRetryable).toList();
  }

  private static boolean isRetryable(MethodDescriptor method) {
    IdempotencyLevel level = method.getOptions().getIdempotencyLevel();
    return level == IdempotencyLevel.NO_SIDE_EFFECTS || level == IdempotencyLevel.IDEMPOTENT;
  }
}
