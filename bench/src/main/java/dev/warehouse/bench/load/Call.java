package dev.warehouse.bench.load;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/** One request of an operation, issued asynchronously; {@code i} picks its key. */
@FunctionalInterface
public interface Call {
  CompletableFuture<?> start(long i);

  /**
   * This call, counting each request it starts in {@code starts}: warm-up requests too, which cost
   * the process that serves them as much CPU as the measured ones.
   */
  default Call countedBy(LongAdder starts) {
    return i -> {
      starts.increment();
      return start(i);
    };
  }
}
