package dev.warehouse.gateway.backend;

import dev.warehouse.runtime.scope.CallerScope;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;

/**
 * Sends the caller's scope to the owning service, when authorization left it for the service to check
 * ({@link CallerScope#CONTEXT_KEY} in the call's context): the only way the header reaches a backend, since the
 * gateway forwards no header of its caller's.
 */
final class ScopeForwarding implements ClientInterceptor {

  static final ScopeForwarding INSTANCE = new ScopeForwarding();

  private ScopeForwarding() {}

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    CallerScope scope = CallerScope.CONTEXT_KEY.get();
    if (scope == null) {
      return next.newCall(method, options);
    }
    return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        headers.put(CallerScope.HEADER, scope.header());
        super.start(listener, headers);
      }
    };
  }
}
