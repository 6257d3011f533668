package dev.warehouse.bench.scenario.overload;

import static dev.warehouse.bench.scenario.overload.Overload.OK;
import static dev.warehouse.bench.scenario.overload.Overload.POLITE_DEADLINE;
import static dev.warehouse.bench.scenario.overload.Overload.POLITE_EVERY;
import static dev.warehouse.bench.scenario.overload.Overload.outcome;

import dev.warehouse.bench.stats.Summary;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** A5 every {@link Overload#POLITE_EVERY}, while a level runs: its outcomes and latency. */
final class Polite {
  private final Caller caller;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "overload-polite");
    t.setDaemon(true);
    return t;
  });
  private final Map<String, LongAdder> statuses = new ConcurrentHashMap<>();
  private final AtomicLong sent = new AtomicLong();
  private final List<CompletableFuture<?>> pending = new ArrayList<>();
  private final org.HdrHistogram.Recorder latency = new org.HdrHistogram.Recorder(TimeUnit.MINUTES.toMicros(1), 3);
  private ScheduledFuture<?> schedule;

  private Polite(Caller caller) {
    this.caller = caller;
  }

  static Polite start(Caller caller) {
    Polite polite = new Polite(caller);
    polite.schedule = polite.timer.scheduleAtFixedRate(polite::call, 0, POLITE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    return polite;
  }

  private void call() {
    long started = System.nanoTime();
    CompletableFuture<?> call = caller.listCustomerOrders(sent.getAndIncrement()).whenComplete((ok, failure) -> {
      statuses.computeIfAbsent(failure == null ? OK : outcome(failure), s -> new LongAdder()).increment();
      if (failure == null) {
        latency.recordValue(Math.max(1, TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - started)));
      }
    });
    synchronized (pending) {
      pending.add(call);
    }
  }

  record Result(long sent, long ok, Map<String, Long> statuses, double p99Ms) {}

  /** Stops calling and waits for the answers still due (each has its deadline). */
  Result stop() throws InterruptedException {
    schedule.cancel(false);
    timer.shutdown();
    timer.awaitTermination(5, TimeUnit.SECONDS);
    CompletableFuture<?>[] calls;
    synchronized (pending) {
      calls = pending.toArray(CompletableFuture[]::new);
    }
    CompletableFuture.allOf(calls).exceptionally(t -> null)
        .completeOnTimeout(null, POLITE_DEADLINE.toMillis() * 2, TimeUnit.MILLISECONDS).join();
    Map<String, Long> counts = new TreeMap<>();
    statuses.forEach((status, n) -> counts.put(status, n.sum()));
    // A call that never answered, not even with its deadline, counts as sent and failed.
    return new Result(sent.get(), counts.getOrDefault(OK, 0L), counts,
        Summary.percentile(latency.getIntervalHistogram(), 99));
  }
}
