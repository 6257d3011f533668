package dev.warehouse.testing;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waits for an eventually consistent read to converge, as a real client of DynamoDB must: repeats
 * the read until its answer passes, or fails after {@link #LIMIT} with the last answer.
 */
public final class Eventually {

  /** Far above the stand-in's lag (200 ms by default) and DynamoDB's usual second. */
  /** Generous: a loaded test machine (test JVMs run two per core) can take seconds over what converges at once. */
  public static final Duration LIMIT = Duration.ofSeconds(15);

  private Eventually() {}

  public static <T> T await(Supplier<T> read, Predicate<? super T> converged) {
    long deadline = System.nanoTime() + LIMIT.toNanos();
    RuntimeException lastFailure = null;
    T last = null;
    while (System.nanoTime() < deadline) {
      try {
        last = read.get();
        if (converged.test(last)) {
          return last;
        }
        lastFailure = null;
      } catch (RuntimeException e) {
        lastFailure = e; // e.g. NOT_FOUND while a new item is not yet visible
      }
      try {
        Thread.sleep(25);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    AssertionError timeout = new AssertionError("the read did not converge within " + LIMIT + "; last answer: " + last);
    if (lastFailure != null) {
      timeout.initCause(lastFailure);
    }
    throw timeout;
  }

  /** Waits until {@code read} answers at all (an item just written becomes visible). */
  public static <T> T await(Supplier<T> read) {
    return await(read, answer -> true);
  }
}
