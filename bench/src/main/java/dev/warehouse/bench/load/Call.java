package dev.warehouse.bench.load;

import java.util.concurrent.CompletableFuture;

/** One request of an operation, issued asynchronously; {@code i} picks its key. */
@FunctionalInterface
public interface Call {
  CompletableFuture<?> start(long i);
}
