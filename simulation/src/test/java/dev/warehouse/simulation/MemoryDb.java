package dev.warehouse.simulation;

import dev.warehouse.runtime.error.UnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The simulated database's I/O: each request is a task of {@link Sim#DATABASE} that applies it at once
 * (atomically, as one DynamoDB request or transaction does), and its answer a task of the node that
 * asked. Between the two the seed may inject the faults DynamoDB documents: a write cancelled by a
 * conflicting transaction (not applied), or an answer lost after the write was applied, which the
 * caller only learns of as a timeout.
 */
final class MemoryDb {

  /** How long a caller waits for a lost answer before its data layer gives up. */
  static final long TIMEOUT_MILLIS = 300;

  private final Sim sim;
  private volatile double lostAnswers;
  private volatile double conflicts;

  MemoryDb(Sim sim) {
    this.sim = sim;
  }

  /** Fault rates from now on; zero stops them. */
  void faults(double lostAnswers, double conflicts) {
    this.lostAnswers = lostAnswers;
    this.conflicts = conflicts;
  }

  <T> CompletableFuture<T> read(String what, Supplier<T> body) {
    return io(what, null, body);
  }

  /** A write; {@code conflict} is what the data layer answers when a conflicting transaction cancels it. */
  <T> CompletableFuture<T> write(String what, Supplier<RuntimeException> conflict, Supplier<T> body) {
    return io(what, conflict, body);
  }

  private <T> CompletableFuture<T> io(String what, Supplier<RuntimeException> conflict, Supplier<T> body) {
    String caller = sim.current();
    CompletableFuture<T> answer = new CompletableFuture<>();
    sim.run(Sim.DATABASE, what, () -> {
      if (conflict != null && sim.chance(conflicts)) {
        sim.note("db " + what + ": conflict, not applied");
        sim.count("db conflict");
        sim.run(caller, what + " conflict", () -> answer.completeExceptionally(conflict.get()));
        return;
      }
      T value = null;
      RuntimeException failure = null;
      try {
        value = body.get();
      } catch (RuntimeException e) {
        failure = e;
      }
      sim.note("db " + what + (failure == null ? ": ok" : ": " + failure.getClass().getSimpleName()));
      if (sim.chance(lostAnswers)) {
        sim.note("db " + what + ": answer lost");
        sim.count("db answer lost");
        sim.after(TIMEOUT_MILLIS, caller, what + " timed out", () -> answer.completeExceptionally(
            new UnavailableException("DATABASE_TIMEOUT", "the database did not answer in time")));
        return;
      }
      T ok = value;
      RuntimeException error = failure;
      sim.run(caller, what + " answer", () -> {
        if (error != null) {
          answer.completeExceptionally(error);
        } else {
          answer.complete(ok);
        }
      });
    });
    return answer;
  }
}
