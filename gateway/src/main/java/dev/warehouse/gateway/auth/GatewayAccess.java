package dev.warehouse.gateway.auth;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.routing.RouteTable;
import io.grpc.ServerBuilder;
import io.grpc.ServerInterceptor;
import io.grpc.ServiceDescriptor;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may call what at the gateway, wired once from {@link AuthConfig}: the count of refusals
 * ({@link AccessRefusals}), the audit trail, then authentication, then authorization, then each caller's
 * quota ({@link CallerQuotas}, when the policy sets any), as server interceptors on every service the
 * gateway serves (reflection too; health is open). Owns the JWKS refresh.
 */
public final class GatewayAccess implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(GatewayAccess.class);

  private final List<ServerInterceptor> inOrder;
  private final AuditTrail audit;
  private final JwksSource jwks;

  private GatewayAccess(List<ServerInterceptor> inOrder, AuditTrail audit, JwksSource jwks) {
    this.inOrder = List.copyOf(inOrder);
    this.audit = audit;
    this.jwks = jwks;
  }

  /**
   * Reads the policy (refusing one that names a method {@code servedServices} does not have) and the JWKS.
   *
   * @param servedServices every service the gateway's port serves, health and reflection included
   * @param audited the contracts whose writes the audit trail records
   * @throws IOException              when the policy or the JWKS cannot be read
   * @throws IllegalArgumentException when the policy is malformed or names unknown methods
   */
  public static GatewayAccess start(AuthConfig config, Clock clock, Collection<ServiceDescriptor> servedServices,
      Collection<Descriptors.ServiceDescriptor> audited, MeterRegistry meters) throws IOException {
    List<ServerInterceptor> interceptors = new ArrayList<>();
    interceptors.add(new AccessRefusals(meters));
    if (config.mode() == AuthMode.NONE) {
      Events.warn(log, "auth_disabled").addKeyValue("auth_mode", "none")
          .addKeyValue("detail", "every caller may call every method through the gateway;"
              + " set AUTH_MODE=jwt with AUTH_POLICY_FILE and a JWKS to authenticate callers").log();
      // Nobody to authenticate or authorize: only the audit trail, which names every caller anonymous.
      AuditTrail anonymous = AuditTrail.of(audited, Caller.ANONYMOUS);
      interceptors.add(anonymous);
      return new GatewayAccess(interceptors, anonymous, null);
    }
    AuditTrail audit = AuditTrail.of(audited);
    interceptors.add(audit);
    AccessPolicy policy = AccessPolicy.read(config.policyFile().orElseThrow()).servedBy(servedServices);
    JwksSource jwks = config.jwksFile().isPresent()
        ? JwksSource.ofFile(config.jwksFile().get(), config.jwksRefresh())
        : JwksSource.ofUrl(config.jwksUrl().orElseThrow(), config.jwksRefresh());
    interceptors.add(CallerAuthentication.of(JwtVerifier.of(config, jwks, clock), policy));
    // The routes and requests of every served contract (the forwarded ones declare routes; health, reflection and the
    // admin service do not, so a scope on them is refused).
    Map<String, Route> routes = new HashMap<>();
    RouteTable.declared(servedServices).forEach(route -> routes.put(route.fullMethodName(), route));
    Map<String, Descriptor> inputTypes = new HashMap<>();
    for (ServiceDescriptor served : servedServices) {
      if (served.getSchemaDescriptor() instanceof io.grpc.protobuf.ProtoServiceDescriptorSupplier schema) {
        schema.getServiceDescriptor().getMethods().forEach(method ->
            inputTypes.put(served.getName() + "/" + method.getName(), method.getInputType()));
      }
    }
    interceptors.add(new MethodAuthorization(policy, config.scopeClaim(), policy.requireScopable(routes, inputTypes),
        inputTypes));
    if (policy.quotas().limits()) {
      interceptors.add(new CallerQuotas(policy.quotas(), audit, meters));
    }
    Events.info(log, "auth_enabled").addKeyValue("auth_mode", config.mode().settingValue())
        .addKeyValue("roles", String.join(",", policy.roles())).addKeyValue("jwks_key_ids", String.join(",", jwks.keyIds()))
        .addKeyValue("quotas", policy.quotas().describe()).log();
    return new GatewayAccess(interceptors, audit, jwks);
  }

  /**
   * Installs the interceptors on every service of {@code builder}, to run in the order above. A server
   * builder runs the interceptor added last first, so they are added in reverse.
   */
  public <T extends ServerBuilder<T>> T install(T builder) {
    for (int i = inOrder.size() - 1; i >= 0; i--) {
      builder.intercept(inOrder.get(i));
    }
    return builder;
  }

  /** Once the calls have ended: every audit line still queued is written before the process may exit. */
  @Override
  public void close() {
    try {
      if (!audit.drain(AUDIT_DRAIN)) {
        Events.warn(log, "audit_drain_incomplete")
            .addKeyValue("detail", "audit lines were still queued after " + AUDIT_DRAIN.toSeconds() + " s").log();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    audit.close();
    if (jwks != null) {
      jwks.close();
    }
  }

  /** Waits until the audit line of every call answered so far is written (tests read them). */
  public void awaitAuditWritten() throws InterruptedException {
    audit.awaitWritten();
  }

  /** Writes out the audit lines queued so far, waiting up to {@code timeout}; whether all were written in time. */
  public boolean drainAudit(Duration timeout) throws InterruptedException {
    return audit.drain(timeout);
  }

  /** How long the stop waits for the audit lines still queued; a queue of 10,000 lines takes well under a second. */
  private static final Duration AUDIT_DRAIN = Duration.ofSeconds(10);
}
