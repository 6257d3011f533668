package dev.warehouse.gateway.auth;

import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts the calls the gateway refuses as UNAUTHENTICATED or PERMISSION_DENIED, by check and reason
 * ({@code gateway_access_refused_total{check, reason}}). A refused call never reaches the gRPC timers, which
 * start inside the checks, so without this a broken JWKS or policy would refuse every caller with every
 * SLO green. Outermost: it also sees a backend's own refusals (a scope the owning service checks).
 *
 * <p>The reasons are the checks' fixed codes ({@code TOKEN_EXPIRED}, {@code METHOD_NOT_ALLOWED}, ...), never
 * a caller's value.
 */
public final class AccessRefusals implements ServerInterceptor {

  /** The counter's name (Prometheus: {@code gateway_access_refused_total}). */
  public static final String METRIC = "gateway.access.refused";

  private final MeterRegistry meters;

  public AccessRefusals(MeterRegistry meters) {
    this.meters = meters;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    return next.startCall(new SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        String check = switch (status.getCode()) {
          case UNAUTHENTICATED -> "authentication";
          case PERMISSION_DENIED -> "authorization";
          default -> null;
        };
        if (check != null) {
          String reason = GrpcErrors.errorInfo(status, trailers).map(e -> e.getReason()).filter(r -> !r.isEmpty())
              .orElse("UNSPECIFIED");
          Counter.builder(METRIC).description("Calls refused by the gateway's authentication or authorization")
              .tag("check", check).tag("reason", reason).register(meters).increment();
        }
        super.close(status, trailers);
      }
    }, headers);
  }
}
