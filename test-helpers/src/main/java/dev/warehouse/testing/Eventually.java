package dev.warehouse.testing;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Waits for an eventually consistent read to converge, as a real client of DynamoDB must: Awaitility
 * repeats the read (an exception, such as NOT_FOUND while a new item is not yet visible, counts as not
 * yet) until its answer passes, or fails after {@link #LIMIT} with what the last read answered or threw,
 * not only that time ran out.
 */
public final class Eventually {

  /**
   * Far above the stand-in's lag (200 ms by default) and DynamoDB's usual second, and generous: a loaded test
   * machine (test JVMs run two per core) can take seconds over what converges at once.
   */
  public static final Duration LIMIT = Duration.ofSeconds(15);

  private Eventually() {}

  public static <T> T await(Supplier<T> read, Predicate<? super T> converged) {
    AtomicReference<Object> last = new AtomicReference<>("no read finished");
    AtomicReference<Throwable> lastFailure = new AtomicReference<>();
    try {
      return Awaitility.await().atMost(LIMIT).pollInterval(Duration.ofMillis(25)).ignoreExceptions()
          .until(() -> {
            try {
              T answer = read.get();
              last.set(answer);
              lastFailure.set(null);
              return answer;
            } catch (RuntimeException | AssertionError e) {
              lastFailure.set(e);
              throw e;
            }
          }, answer -> {
            try {
              return converged.test(answer);
            } catch (RuntimeException | AssertionError e) {
              lastFailure.set(e);
              throw e;
            }
          });
    } catch (ConditionTimeoutException timeout) {
      Throwable cause = lastFailure.get();
      throw new AssertionError(cause != null
          ? "not converged within " + LIMIT + "; the last read failed: " + cause
          : "not converged within " + LIMIT + "; the last read answered: " + last.get(), cause != null ? cause : timeout);
    }
  }

  /** Waits until {@code read} answers at all (an item just written becomes visible). */
  public static <T> T await(Supplier<T> read) {
    return await(read, answer -> true);
  }
}
