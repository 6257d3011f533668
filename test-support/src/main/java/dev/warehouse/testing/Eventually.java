package dev.warehouse.testing;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.awaitility.Awaitility;

/**
 * Waits for an eventually consistent read to converge, as a real client of DynamoDB must: Awaitility
 * repeats the read (an exception, such as NOT_FOUND while a new item is not yet visible, counts as not
 * yet) until its answer passes, or fails after {@link #LIMIT}.
 */
public final class Eventually {

  /**
   * Far above the stand-in's lag (200 ms by default) and DynamoDB's usual second, and generous: a loaded test
   * machine (test JVMs run two per core) can take seconds over what converges at once.
   */
  public static final Duration LIMIT = Duration.ofSeconds(15);

  private Eventually() {}

  public static <T> T await(Supplier<T> read, Predicate<? super T> converged) {
    return Awaitility.await().atMost(LIMIT).pollInterval(Duration.ofMillis(25)).ignoreExceptions()
        .until(read::get, converged);
  }

  /** Waits until {@code read} answers at all (an item just written becomes visible). */
  public static <T> T await(Supplier<T> read) {
    return await(read, answer -> true);
  }
}
