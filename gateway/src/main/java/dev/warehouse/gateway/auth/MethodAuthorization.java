package dev.warehouse.gateway.auth;

import dev.warehouse.runtime.error.PermissionDeniedException;
import dev.warehouse.runtime.error.UnauthenticatedException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Map;

/**
 * Lets a call through only when the policy allows its method to one of the caller's roles; otherwise
 * PERMISSION_DENIED ({@code METHOD_NOT_ALLOWED}), and the backend never hears of it. Runs after
 * {@link CallerAuthentication}, reading the {@link Caller} it put into the context; a call that
 * somehow has none is refused (deny by default).
 */
public final class MethodAuthorization implements ServerInterceptor {

  private final AccessPolicy policy;

  public MethodAuthorization(AccessPolicy policy) {
    this.policy = policy;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    if (CallerAuthentication.OPEN_SERVICES.contains(call.getMethodDescriptor().getServiceName())) {
      return next.startCall(call, headers);
    }
    Caller caller = Caller.current().orElse(null);
    if (caller == null) {
      return GrpcErrors.refuse(call,
          new UnauthenticatedException("CREDENTIALS_MISSING", "this call needs a credential"));
    }
    if (!policy.allows(caller.roles(), method)) {
      return GrpcErrors.refuse(call, new PermissionDeniedException("METHOD_NOT_ALLOWED",
          caller.identity() + " may not call " + method + " (roles: "
              + (caller.roles().isEmpty() ? "none" : String.join(",", caller.roles().stream().sorted().toList())) + ")",
          Map.of("method", method)));
    }
    return next.startCall(call, headers);
  }
}
