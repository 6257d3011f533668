package dev.warehouse.runtime.tls;

import dev.warehouse.runtime.error.PermissionDeniedException;
import dev.warehouse.runtime.error.UnauthenticatedException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.log.CallFields;
import dev.warehouse.runtime.log.Events;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.health.v1.HealthGrpc;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts the identity of each call's TLS client certificate into the call's {@link Context}
 * ({@link PeerIdentity#CONTEXT_KEY}) and, when it {@code requires} one, admits only the trusted
 * identities. It checks per call rather than in the TLS handshake so that a refused caller learns why
 * from a status (a failed handshake is an UNAVAILABLE with no reason), and so that health stays open.
 *
 * <ul>
 *   <li>No identity (no certificate, or one without exactly one URI SAN): UNAUTHENTICATED,
 *       {@code PEER_IDENTITY_MISSING}: the caller did not prove who it is.
 *   <li>An identity the CA vouches for, but not a trusted one: PERMISSION_DENIED, {@code PEER_NOT_TRUSTED}:
 *       we know who it is, and it may not call this service.
 *   <li>{@link #OPEN_SERVICES} admit every connection the handshake let in.
 *   <li>A service with callers of its own (an internal one, say) admits those instead of the port's.
 * </ul>
 */
public final class PeerIdentityInterceptor implements ServerInterceptor {

  /**
   * Open to any caller the handshake admitted: health tells only whether the process serves, and
   * container probes ask it with the process's own certificate.
   */
  public static final Set<String> OPEN_SERVICES = Set.of(HealthGrpc.SERVICE_NAME);

  private static final Logger log = LoggerFactory.getLogger(PeerIdentityInterceptor.class);

  private final TrustedPeers trusted;
  private final Map<String, TrustedPeers> byService;
  private final boolean required;

  /**
   * @param trusted  who may call (ignored unless {@code required})
   * @param required refuse calls without a trusted identity ({@code mtls}); otherwise only record the identity
   */
  public PeerIdentityInterceptor(TrustedPeers trusted, boolean required) {
    this(trusted, Map.of(), required);
  }

  /**
   * @param byService services (by full name) whose calls admit their own identities instead of {@code trusted}
   */
  public PeerIdentityInterceptor(TrustedPeers trusted, Map<String, TrustedPeers> byService, boolean required) {
    this.trusted = trusted;
    this.byService = Map.copyOf(byService);
    this.required = required;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    Optional<PeerIdentity> identity = PeerIdentity.of(call);
    String service = call.getMethodDescriptor().getServiceName();
    if (required && !OPEN_SERVICES.contains(service)) {
      if (identity.isEmpty()) {
        return GrpcErrors.refuse(call, new UnauthenticatedException("PEER_IDENTITY_MISSING",
            "this service accepts only calls whose TLS client certificate names one URI identity"));
      }
      if (!byService.getOrDefault(service, trusted).allows(identity.get().uri())) {
        Events.warn(log, "peer_refused").addKeyValue("peer", identity.get().uri())
            .addKeyValue("method", call.getMethodDescriptor().getFullMethodName()).log();
        return GrpcErrors.refuse(call, new PermissionDeniedException("PEER_NOT_TRUSTED",
            "the identity " + identity.get().uri() + " may not call " + service, Map.of("peer", identity.get().uri())));
      }
    }
    if (identity.isEmpty()) {
      return next.startCall(call, headers);
    }
    CallFields.caller(identity.get().uri()); // the caller of this call's log lines
    return Contexts.interceptCall(Context.current().withValue(PeerIdentity.CONTEXT_KEY, identity.get()), call, headers,
        next);
  }

}
