package dev.warehouse.gateway.auth;

import dev.warehouse.runtime.error.UnauthenticatedException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.log.CallFields;
import dev.warehouse.runtime.tls.PeerIdentity;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.health.v1.HealthGrpc;
import java.util.Iterator;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Establishes who calls, and puts the {@link Caller} into the call's {@link Context}; a call whose
 * credential is missing or not accepted ends here, UNAUTHENTICATED, and goes no further.
 *
 * <ol>
 *   <li>An {@code authorization: Bearer <JWT>} header: the token decides (a bad token is refused even on a
 *       connection with a good client certificate: the caller asked to be taken for the token's subject).
 *   <li>Otherwise, a TLS client certificate with one URI SAN: that identity, with the roles the policy
 *       gives it (none if it names none: authenticated, and allowed nothing).
 *   <li>Otherwise {@code CREDENTIALS_MISSING}.
 * </ol>
 * {@link #OPEN_SERVICES} (health) are answered for anyone, whatever they send. With AUTH_MODE=none it is
 * not installed at all ({@link GatewayAccess}).
 */
public final class CallerAuthentication implements ServerInterceptor {

  /** Open to every caller: health says only whether the gateway serves, and probes and balancers ask it. */
  public static final Set<String> OPEN_SERVICES = Set.of(HealthGrpc.SERVICE_NAME);

  static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /** gRPC's default limit on a request's headers is 8 KiB; a token near it is not one we issued. */
  private static final int MAX_TOKEN_LENGTH = 8 * 1024;

  private final JwtVerifier jwt;
  private final AccessPolicy policy;

  private CallerAuthentication(JwtVerifier jwt, AccessPolicy policy) {
    this.jwt = jwt;
    this.policy = policy;
  }

  public static CallerAuthentication of(JwtVerifier jwt, AccessPolicy policy) {
    return new CallerAuthentication(jwt, policy);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    if (OPEN_SERVICES.contains(call.getMethodDescriptor().getServiceName())) {
      return next.startCall(call, headers);
    }
    Caller caller;
    try {
      caller = authenticate(call, headers);
    } catch (UnauthenticatedException e) {
      return GrpcErrors.refuse(call, e);
    }
    AuditTrail.identify(caller);
    CallFields.caller(caller.identity());
    return Contexts.interceptCall(Context.current().withValue(Caller.CONTEXT_KEY, caller), call, headers, next);
  }

  private Caller authenticate(ServerCall<?, ?> call, Metadata headers) {
    Iterable<String> values = headers.getAll(AUTHORIZATION);
    if (values != null) {
      Iterator<String> all = values.iterator();
      String value = all.next();
      if (all.hasNext()) {
        throw new UnauthenticatedException("TOKEN_MALFORMED", "send one authorization header, not several");
      }
      return jwt.verify(bearerToken(value));
    }
    Optional<String> identity = PeerIdentity.of(call).map(PeerIdentity::uri);
    if (identity.isPresent()) {
      return new Caller(identity.get(), "mtls", policy.rolesOf(identity.get()));
    }
    throw new UnauthenticatedException("CREDENTIALS_MISSING",
        "this call needs a credential: an 'authorization: Bearer <token>' header, or a TLS client certificate");
  }

  private static String bearerToken(String header) {
    String value = header.trim();
    int space = value.indexOf(' ');
    if (space < 0 || !value.substring(0, space).toLowerCase(Locale.ROOT).equals("bearer")) {
      throw new UnauthenticatedException("TOKEN_MALFORMED", "the authorization header must be 'Bearer <token>'");
    }
    String token = value.substring(space + 1).trim();
    if (token.isEmpty() || token.length() > MAX_TOKEN_LENGTH) {
      throw new UnauthenticatedException("TOKEN_MALFORMED", "the authorization header must be 'Bearer <token>'");
    }
    return token;
  }

}
