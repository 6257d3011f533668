package dev.warehouse.gateway.auth;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.warehouse.gateway.auth.AccessPolicy.ScopedRule;
import dev.warehouse.runtime.error.PermissionDeniedException;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.error.UnauthenticatedException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.scope.CallerScope;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Lets a call through only when the policy allows its method to one of the caller's roles; otherwise
 * PERMISSION_DENIED ({@code METHOD_NOT_ALLOWED}), and the backend never hears of it. Runs after
 * {@link CallerAuthentication}, reading the {@link Caller} it put into the context; a call that
 * somehow has none is refused (deny by default).
 *
 * <p>A role allowed a method for its own records only ({@link ScopedRule}) is let through when the request meets
 * one of its rules: the rule's {@code only} values, and its scope field equal to the caller's claim
 * ({@code AUTH_SCOPE_CLAIM}) where the route's partition key carries the field; where it does not (an order by its
 * id), the scope goes to the owning service with the call ({@link CallerScope#HEADER}), which checks the item it
 * reads. Either refusal is PERMISSION_DENIED, {@code OUT_OF_SCOPE}, naming the scope, and the same whether the
 * record exists or not. Only a scoped call's request is decoded here; every other call's bytes pass untouched.
 */
public final class MethodAuthorization implements ServerInterceptor {

  private final AccessPolicy policy;
  private final String scopeClaim;
  /** For each scoped rule, whether the gateway checks its field ({@code true}) or the owning service does. */
  private final Map<ScopedRule, Boolean> checkedHere;
  private final Map<String, Descriptor> inputTypes;

  /**
   * @param checkedHere what {@link AccessPolicy#requireScopable} said of each scoped rule
   * @param inputTypes  the request message of each method, by full name
   */
  public MethodAuthorization(AccessPolicy policy, String scopeClaim, Map<ScopedRule, Boolean> checkedHere,
      Map<String, Descriptor> inputTypes) {
    this.policy = policy;
    this.scopeClaim = scopeClaim;
    this.checkedHere = Map.copyOf(checkedHere);
    this.inputTypes = Map.copyOf(inputTypes);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    // A caller's own copy of the forwarded scope counts for nothing (the backends never see the caller's headers).
    headers.removeAll(CallerScope.HEADER);
    String method = call.getMethodDescriptor().getFullMethodName();
    if (CallerAuthentication.OPEN_SERVICES.contains(call.getMethodDescriptor().getServiceName())) {
      return next.startCall(call, headers);
    }
    Caller caller = Caller.current().orElse(null);
    if (caller == null) {
      return GrpcErrors.refuse(call,
          new UnauthenticatedException("CREDENTIALS_MISSING", "this call needs a credential"));
    }
    if (policy.allows(caller.roles(), method)) {
      return next.startCall(call, headers);
    }
    List<ScopedRule> scoped = policy.scopedRules(caller.roles(), method);
    if (scoped.isEmpty()) {
      return GrpcErrors.refuse(call, new PermissionDeniedException("METHOD_NOT_ALLOWED",
          caller.identity() + " may not call " + method + " (roles: "
              + (caller.roles().isEmpty() ? "none" : String.join(",", caller.roles().stream().sorted().toList())) + ")",
          Map.of("method", method)));
    }
    String own = caller.claims().get(scopeClaim);
    if (own == null || own.isEmpty()) {
      return GrpcErrors.refuse(call, new PermissionDeniedException("SCOPE_CLAIM_MISSING", caller.identity()
          + " may call " + method + " for its own records only, and its token has no " + scopeClaim + " claim",
          Map.of("method", method, "claim", scopeClaim)));
    }
    return new ScopedCall<>(call, headers, next, scoped, own, inputTypes.get(method));
  }

  /**
   * A scoped call: the request is read before the call is handed on (for a unary call, nothing is forwarded
   * before its one message anyway); refused, the backend never hears of it.
   */
  private final class ScopedCall<Q, R> extends ServerCall.Listener<Q> {
    private final ServerCall<Q, R> call;
    private final Metadata headers;
    private final ServerCallHandler<Q, R> next;
    private final List<ScopedRule> rules;
    private final String own;
    private final Descriptor requestType;
    private ServerCall.Listener<Q> delegate;
    private Context context;
    private boolean refused;

    ScopedCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next, List<ScopedRule> rules,
        String own, Descriptor requestType) {
      this.call = call;
      this.headers = headers;
      this.next = next;
      this.rules = rules;
      this.own = own;
      this.requestType = requestType;
      call.request(1); // the handler has not started, so the message is asked for here
    }

    @Override
    public void onMessage(Q message) {
      if (refused) {
        return;
      }
      Optional<ScopedRule> met = meets(message);
      if (met.isEmpty()) {
        refused = true;
        ClientFacingException refusal = new CallerScope(rules.get(0).field(), own).refusal("records");
        StatusRuntimeException status = GrpcErrors.toStatusException(refusal);
        call.close(status.getStatus(), status.getTrailers());
        return;
      }
      ScopedRule rule = met.get();
      context = checkedHere.getOrDefault(rule, true) ? Context.current()
          : Context.current().withValue(CallerScope.CONTEXT_KEY, new CallerScope(rule.field(), own));
      Context previous = context.attach();
      try {
        delegate = next.startCall(call, headers);
      } finally {
        context.detach(previous);
      }
      context.run(() -> delegate.onMessage(message));
    }

    /** The first rule the request meets: its {@code only} values, and its field the caller's where the gateway checks it. */
    private Optional<ScopedRule> meets(Q message) {
      DynamicMessage request;
      try {
        request = DynamicMessage.parseFrom(requestType, (byte[]) message);
      } catch (InvalidProtocolBufferException | ClassCastException | NullPointerException e) {
        return Optional.empty();
      }
      return rules.stream().filter(rule -> rule.only().entrySet().stream()
              .allMatch(value -> value.getValue().equals(text(request, value.getKey()))))
          .filter(rule -> !checkedHere.getOrDefault(rule, true) || own.equals(text(request, rule.field())))
          .findFirst();
    }

    private String text(DynamicMessage request, String field) {
      FieldDescriptor descriptor = requestType.findFieldByName(field);
      if (descriptor == null || descriptor.isRepeated()) {
        return null;
      }
      Object value = request.getField(descriptor);
      return value instanceof EnumValueDescriptor constant ? constant.getName() : String.valueOf(value);
    }

    @Override
    public void onHalfClose() {
      if (delegate != null) {
        context.run(delegate::onHalfClose);
      }
    }

    @Override
    public void onCancel() {
      if (delegate != null) {
        context.run(delegate::onCancel);
      }
    }

    @Override
    public void onComplete() {
      if (delegate != null) {
        context.run(delegate::onComplete);
      }
    }

    @Override
    public void onReady() {
      if (delegate != null) {
        context.run(delegate::onReady);
      }
    }
  }
}
