package dev.warehouse.order.domain;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** Waits without blocking a thread: on the process's timer, or on a simulation's clock. */
@FunctionalInterface
public interface Delay {

  /** Completes once {@code wait} has passed. */
  CompletableFuture<Void> after(Duration wait);

  /** On {@code scheduler}'s thread, which it never blocks. */
  static Delay on(ScheduledExecutorService scheduler) {
    return wait -> {
      CompletableFuture<Void> done = new CompletableFuture<>();
      scheduler.schedule(() -> done.complete(null), wait.toNanos(), TimeUnit.NANOSECONDS);
      return done;
    };
  }
}
