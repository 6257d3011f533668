package dev.warehouse.runtime.dynamo;

import io.grpc.Context;
import io.grpc.Deadline;
import java.util.concurrent.TimeUnit;

/**
 * The time and cancellation of the call that a DynamoDB request serves: the gRPC {@link Context} that
 * was current when the data-access layer was entered. Outside a gRPC call (an admin tool, a test
 * driving a repository) it is the root context: no deadline, never cancelled.
 *
 * <p>The layer completes its futures inside this context, so the stages a repository or domain
 * service chains on them (the read after a transaction, the next round of a status change) run in the
 * same call's context and their own DynamoDB requests see the same deadline.
 */
final class CallScope {

  private final Context context;

  private CallScope(Context context) {
    this.context = context;
  }

  static CallScope current() {
    return new CallScope(Context.current());
  }

  /** Nanoseconds left before the caller's deadline; {@link Long#MAX_VALUE} when it set none. */
  long remainingNanos() {
    Deadline deadline = context.getDeadline();
    return deadline == null ? Long.MAX_VALUE : deadline.timeRemaining(TimeUnit.NANOSECONDS);
  }

  /** Whether the call has ended for its caller: cancelled, or past its deadline. */
  boolean ended() {
    return context.isCancelled() || remainingNanos() <= 0;
  }

  /** Whether it ended because the deadline passed (rather than the caller cancelling). */
  boolean deadlinePassed() {
    return remainingNanos() <= 0;
  }

  /** Runs {@code onEnd} when the call is cancelled or its deadline passes; returns the handle to remove it. */
  Context.CancellationListener onEnd(Runnable onEnd) {
    Context.CancellationListener listener = ended -> onEnd.run();
    context.addListener(listener, Runnable::run);
    return listener;
  }

  void removeListener(Context.CancellationListener listener) {
    context.removeListener(listener);
  }

  /** Calls {@code action} with this call's context attached to the current thread. */
  <T> T call(java.util.function.Supplier<T> action) {
    Context previous = context.attach();
    try {
      return action.get();
    } finally {
      context.detach(previous);
    }
  }

  /** Runs {@code action} with this call's context attached to the current thread. */
  void run(Runnable action) {
    context.run(action);
  }
}
