package dev.warehouse.bench.load;

import java.time.Duration;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.LongFunction;

/**
 * Virtual time for the load generators' tests, on the generator's one thread: a wait jumps to its deadline,
 * answering on the way, in time order, the calls due before it. Latencies are then the schedule's own, however
 * busy the machine running the test is.
 */
final class SteppedTicker implements Ticker {

  private record Due(long at, long order, Runnable action) {}

  private final PriorityQueue<Due> due = new PriorityQueue<>(Comparator.comparingLong(Due::at).thenComparingLong(Due::order));
  private long now;
  private long scheduled;

  @Override
  public long nanoTime() {
    return now;
  }

  @Override
  public long waitUntil(long deadline) {
    runUntil(deadline, null);
    now = Math.max(now, deadline);
    return now;
  }

  @Override
  public boolean await(CountDownLatch latch, long timeoutNanos) {
    runUntil(timeoutNanos > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + timeoutNanos, latch);
    return latch.getCount() == 0;
  }

  private void runUntil(long limit, CountDownLatch until) {
    while (!due.isEmpty() && due.peek().at() <= limit && (until == null || until.getCount() > 0)) {
      Due next = due.poll();
      now = Math.max(now, next.at());
      next.action().run();
    }
  }

  /** A call answered {@code latency} after it starts. */
  Call answeredAfter(Duration latency) {
    return i -> answerAt(now + latency.toNanos());
  }

  /**
   * A server that handles one request at a time, request {@code n} (counted from its first) in
   * {@code serviceTime.apply(n)}: a request waits for those before it to be served.
   */
  Call serialServer(LongFunction<Duration> serviceTime) {
    long[] handled = {0};
    long[] freeAt = {Long.MIN_VALUE};
    return i -> {
      freeAt[0] = Math.max(now, freeAt[0]) + serviceTime.apply(handled[0]++).toNanos();
      return answerAt(freeAt[0]);
    };
  }

  private CompletableFuture<Void> answerAt(long at) {
    CompletableFuture<Void> answer = new CompletableFuture<>();
    due.add(new Due(at, scheduled++, () -> answer.complete(null)));
    return answer;
  }
}
