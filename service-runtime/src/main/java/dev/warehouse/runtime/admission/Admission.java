package dev.warehouse.runtime.admission;

import com.netflix.concurrency.limits.Limiter;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A service's admission control: a call takes a slot of its RPC's limit ({@link RouteLimiter}) when it
 * first needs the store (its first DynamoDB call, {@link #enter}), and gives it back when it ends.
 * Over the limit, that first store call fails at once with RESOURCE_EXHAUSTED ({@code OVERLOADED},
 * with a {@code google.rpc.RetryInfo}), before anything is read or written.
 *
 * <p>Admitting at the store, not at the door, is what keeps cheap calls cheap: health checks and
 * calls refused for their input (INVALID_ARGUMENT) never touch the store, so they are never refused,
 * whatever the load; and what is limited is exactly what overloads, the calls waiting on the store.
 * Work outside a call (the recovery and expiry loops, audits) has no slot to take and is paced by its
 * own settings.
 */
public final class Admission implements ServerInterceptor {

  private static final Context.Key<Ticket> TICKET = Context.key("admission-ticket");

  private final RouteLimiter limiter;
  private final Set<String> methods;

  /**
   * @param methods the full method names whose calls take slots; calls of other methods (health,
   *                reflection) pass untouched
   */
  public Admission(RouteLimiter limiter, Set<String> methods) {
    this.limiter = limiter;
    this.methods = Set.copyOf(methods);
  }

  /**
   * Called before a store call: empty when the call may go on (it holds a slot now, or it is not a
   * limited call), or the refusal to fail it with.
   */
  public static Optional<ResourceExhaustedException> enter() {
    Ticket ticket = TICKET.get();
    return ticket == null ? Optional.empty() : ticket.enter();
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    if (!methods.contains(call.getMethodDescriptor().getFullMethodName())) {
      return next.startCall(call, headers);
    }
    Ticket ticket = new Ticket(limiter, call.getMethodDescriptor().getBareMethodName());
    ServerCall<Q, R> closing = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        ticket.end(RouteLimiter.outcomeOf(status.getCode()));
        super.close(status, trailers);
      }
    };
    ServerCall.Listener<Q> listener = Contexts.interceptCall(Context.current().withValue(TICKET, ticket), closing,
        headers, next);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onCancel() {
        ticket.end(RouteLimiter.Outcome.IGNORED);
        super.onCancel();
      }
    };
  }

  /** One call's claim on a slot: taken at its first store call, given back once, when the call ends. */
  private static final class Ticket {
    private final RouteLimiter limiter;
    private final String route;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile Limiter.Listener slot;

    Ticket(RouteLimiter limiter, String route) {
      this.limiter = limiter;
      this.route = route;
    }

    /** Synchronized: a call's store calls can start on two threads at once (a fan-out over shards). */
    synchronized Optional<ResourceExhaustedException> enter() {
      if (slot != null || ended.get()) {
        return Optional.empty();
      }
      Optional<Limiter.Listener> taken = limiter.acquire(route);
      if (taken.isEmpty()) {
        return Optional.of(limiter.refusal(route, "the service is at its concurrency limit", Map.of()));
      }
      slot = taken.get();
      return Optional.empty();
    }

    void end(RouteLimiter.Outcome outcome) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      Limiter.Listener held;
      synchronized (this) {
        held = slot;
      }
      if (held != null) {
        RouteLimiter.release(held, outcome);
      }
    }
  }
}
