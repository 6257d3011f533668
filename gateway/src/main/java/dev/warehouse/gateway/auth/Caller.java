package dev.warehouse.gateway.auth;

import io.grpc.Context;
import java.util.Optional;
import java.util.Map;
import java.util.Set;

/**
 * Who is calling, as {@link CallerAuthentication} established it, in the call's {@link Context}: what
 * authorization and the audit trail read. Nothing after authentication looks at a credential again.
 *
 * @param identity the token's {@code sub}, or the client certificate's URI SAN ({@code spiffe://...})
 * @param via      how it was established: {@code jwt}, {@code mtls}, or {@code none} (AUTH_MODE=none)
 * @param roles    its roles: the token's roles claim, or the policy's roles for the certificate's identity
 * @param claims   the token's claims whose values are strings ({@code sub}, and the one a scope compares:
 *                 {@code AUTH_SCOPE_CLAIM}); none for a certificate
 */
public record Caller(String identity, String via, Set<String> roles, Map<String, String> claims) {

  public static final Context.Key<Caller> CONTEXT_KEY = Context.key("warehouse.caller");

  /** Every caller when AUTH_MODE=none: nobody was asked. */
  public static final Caller ANONYMOUS = new Caller("anonymous", "none", Set.of());

  public Caller {
    roles = Set.copyOf(roles);
    claims = Map.copyOf(claims);
  }

  /** Without claims: a certificate's caller, or nobody's. */
  public Caller(String identity, String via, Set<String> roles) {
    this(identity, via, roles, Map.of());
  }

  /** The caller of the current server call, once authenticated. */
  public static Optional<Caller> current() {
    return Optional.ofNullable(CONTEXT_KEY.get());
  }
}
