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
import io.grpc.Deadline;
import io.grpc.Status;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A service's admission control: a call takes a slot of its RPC's limit ({@link RouteLimiter}) when it
 * first needs the store (its first DynamoDB call, {@link #enter}), and gives it back when it ends.
 * Over the limit, that first store call waits for a slot, briefly and within its caller's deadline; when
 * none comes, it fails with RESOURCE_EXHAUSTED ({@code OVERLOADED}, with a {@code google.rpc.RetryInfo}),
 * before anything is read or written.
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

  private static final CompletableFuture<Void> ADMITTED = CompletableFuture.completedFuture(null);

  /**
   * Called before a store call: completes when the call may go on (it holds a slot, or it is not a limited
   * call), at once in the common case; fails with the refusal ({@link ResourceExhaustedException}) when no
   * slot came within the wait. It may complete on another thread, outside the call's gRPC context.
   */
  public static CompletableFuture<Void> enter() {
    Ticket ticket = TICKET.get();
    return ticket == null ? ADMITTED : ticket.enter();
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

  /**
   * One call's claim on a slot: asked for at its first store call, given back once, when the call ends
   * (or at once, if it ended while it waited).
   */
  private static final class Ticket {
    private final RouteLimiter limiter;
    private final String route;
    /** Guarded by {@code this}. */
    private CompletableFuture<Void> admitted;
    private Limiter.Listener slot;
    private RouteLimiter.Outcome ended;

    Ticket(RouteLimiter limiter, String route) {
      this.limiter = limiter;
      this.route = route;
    }

    /** Synchronized: a call's store calls can start on two threads at once (a fan-out over shards). */
    synchronized CompletableFuture<Void> enter() {
      if (admitted != null) {
        return admitted;
      }
      if (ended != null) {
        return ADMITTED; // the call is over: its store call fails on its own deadline or cancellation
      }
      Deadline deadline = Context.current().getDeadline(); // the call's: enter() runs in it
      long timeLeft = deadline == null ? Long.MAX_VALUE : deadline.timeRemaining(TimeUnit.NANOSECONDS);
      admitted = limiter.admit(route, timeLeft, "the service is at its concurrency limit", Map.of())
          .thenAccept(this::taken);
      return admitted;
    }

    private void taken(Limiter.Listener given) {
      RouteLimiter.Outcome endedMeanwhile;
      synchronized (this) {
        endedMeanwhile = ended;
        slot = endedMeanwhile == null ? given : null;
      }
      if (endedMeanwhile != null) {
        RouteLimiter.release(given, RouteLimiter.Outcome.IGNORED); // the caller left while it waited
      }
    }

    void end(RouteLimiter.Outcome outcome) {
      Limiter.Listener held;
      synchronized (this) {
        if (ended != null) {
          return;
        }
        ended = outcome;
        held = slot;
        slot = null;
      }
      if (held != null) {
        RouteLimiter.release(held, outcome);
      }
    }
  }
}
