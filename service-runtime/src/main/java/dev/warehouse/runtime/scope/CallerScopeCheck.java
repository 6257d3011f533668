package dev.warehouse.runtime.scope;

import dev.warehouse.runtime.error.PermissionDeniedException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.tls.PeerIdentity;
import dev.warehouse.runtime.tls.TrustedPeers;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A service's side of the caller scopes the gateway forwards ({@link CallerScope#HEADER}). With mutual TLS, the
 * header is accepted only from the gateway (the identities of {@code TLS_TRUSTED_PEERS}): another caller, the
 * order-service calling the reservations say, cannot claim to act for a customer. A scope is accepted only on a
 * route that declares the field among its {@code owner_fields}, whose service then checks the item it reads; any
 * other scoped call is refused (deny by default: a scope nobody checks must not pass as checked).
 */
public final class CallerScopeCheck implements ServerInterceptor {

  private final Map<String, List<String>> ownerFields = new HashMap<>();
  private final Optional<TrustedPeers> gateway;

  /**
   * @param routes  the routes of the service's methods
   * @param gateway with mutual TLS, who may forward a scope; empty without it (anyone who reaches the port could
   *                call without a scope anyway)
   */
  public CallerScopeCheck(Collection<Route> routes, Optional<TrustedPeers> gateway) {
    routes.forEach(route -> ownerFields.put(route.fullMethodName(), route.ownerFields()));
    this.gateway = gateway;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String header = headers.get(CallerScope.HEADER);
    if (header == null) {
      return next.startCall(call, headers);
    }
    String method = call.getMethodDescriptor().getFullMethodName();
    Optional<String> peer = PeerIdentity.current().map(PeerIdentity::uri);
    if (gateway.isPresent() && (peer.isEmpty() || gateway.get().anyFromCa() || !gateway.get().allows(peer.get()))) {
      return GrpcErrors.refuse(call, new PermissionDeniedException("SCOPE_NOT_FROM_GATEWAY",
          "only the gateway may forward a caller's scope", Map.of("method", method)));
    }
    CallerScope scope;
    try {
      scope = CallerScope.parse(header);
    } catch (IllegalArgumentException e) {
      return GrpcErrors.refuse(call, new PermissionDeniedException("SCOPE_MALFORMED", "the forwarded scope is malformed",
          Map.of("method", method)));
    }
    if (!ownerFields.getOrDefault(method, List.of()).contains(scope.field())) {
      return GrpcErrors.refuse(call, new PermissionDeniedException("SCOPE_NOT_CHECKED",
          method + " does not check a caller's " + scope.field() + " against what it reads",
          Map.of("method", method, "scope", scope.field())));
    }
    return Contexts.interceptCall(Context.current().withValue(CallerScope.CONTEXT_KEY, scope), call, headers, next);
  }
}
