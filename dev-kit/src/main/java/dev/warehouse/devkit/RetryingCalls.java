package dev.warehouse.devkit;

import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A client's retry of answers that say "not now": RESOURCE_EXHAUSTED (a limit, a quota, a throttled
 * table), UNAVAILABLE (no instance reached) and ABORTED (contention). It waits as long as the answer's
 * {@code google.rpc.RetryInfo} asks, or a doubling backoff when it names no delay, and gives up after
 * {@link #MAX_ATTEMPTS} attempts with the last answer. Each call it repeats must be safe to repeat: the demo
 * loader's writes carry a fixed request id, or are written only when absent.
 */
final class RetryingCalls {

  static final int MAX_ATTEMPTS = 8;
  static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
  static final Duration LONGEST_WAIT = Duration.ofSeconds(5);
  private static final Set<Status.Code> NOT_NOW =
      Set.of(Status.Code.RESOURCE_EXHAUSTED, Status.Code.UNAVAILABLE, Status.Code.ABORTED);

  /** Waits between attempts; a test records the waits instead. */
  interface Sleeper {
    void sleep(Duration duration) throws InterruptedException;
  }

  private final Sleeper sleeper;
  private final PrintStream out;

  RetryingCalls(Sleeper sleeper, PrintStream out) {
    this.sleeper = sleeper;
    this.out = out;
  }

  static RetryingCalls sleeping(PrintStream out) {
    return new RetryingCalls(duration -> Thread.sleep(duration.toMillis()), out);
  }

  /** {@code call}'s answer, asked again after each "not now" up to {@link #MAX_ATTEMPTS} times. */
  <T> T call(String what, Supplier<T> call) {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (StatusRuntimeException e) {
        if (!NOT_NOW.contains(e.getStatus().getCode()) || attempt == MAX_ATTEMPTS) {
          throw e;
        }
        Duration wait = retryDelay(e).orElse(FIRST_BACKOFF.multipliedBy(1L << (attempt - 1)));
        wait = wait.compareTo(LONGEST_WAIT) > 0 ? LONGEST_WAIT : wait;
        out.println("demo data: " + what + " answered " + e.getStatus().getCode() + ", trying again in "
            + wait.toMillis() + " ms (attempt " + (attempt + 1) + " of " + MAX_ATTEMPTS + ")");
        try {
          sleeper.sleep(wait);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  /** The delay the answer's {@code google.rpc.RetryInfo} asks for, if it carries one. */
  static Optional<Duration> retryDelay(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    if (status == null) {
      return Optional.empty();
    }
    return status.getDetailsList().stream().filter(detail -> detail.is(RetryInfo.class)).findFirst().map(detail -> {
      try {
        com.google.protobuf.Duration delay = detail.unpack(RetryInfo.class).getRetryDelay();
        return Duration.ofSeconds(delay.getSeconds(), delay.getNanos());
      } catch (com.google.protobuf.InvalidProtocolBufferException malformed) {
        return FIRST_BACKOFF;
      }
    });
  }
}
