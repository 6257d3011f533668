package dev.warehouse.bench.load;

import dev.warehouse.bench.stats.LatencyStats;
import dev.warehouse.bench.stats.Summary;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Predicate;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * An open loop past what the system serves: requests at a fixed rate whatever the answers, latency from
 * each request's intended start (coordinated omission corrected, as {@link OpenLoop}), and what
 * OpenLoop has no use for below capacity:
 *
 * <ul>
 *   <li>every outcome's latency, not only the successes': how fast a refusal comes is a figure of its own;
 *   <li>how late the generator sent each request, how many it sent, and each outcome's latency from its
 *       sending too: past a few thousand requests per second on a small machine the generator itself
 *       falls behind, what it offered is then less than was asked, and the latency from the intended
 *       start counts its lag;
 *   <li>the schedule's end while answers are still due ({@link #awaitSchedule}): what follows a flood
 *       (the recovery) is timed from its last request, not from its last answer.
 * </ul>
 *
 * <p>It never sends past the schedule's end: requests a lagging generator had not sent by then are not
 * sent at all, so a level lasts its duration and its offered rate is {@code sent / duration}.
 */
public final class Flood {

  private final double ratePerSecond;
  private final Duration duration;
  private final Function<Throwable, String> classify;
  private final Map<String, Recorder> fromIntended = new ConcurrentHashMap<>();
  private final Map<String, Recorder> fromSent = new ConcurrentHashMap<>();
  private final Recorder lateness = recorder();
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong answered = new AtomicLong();
  private final CountDownLatch scheduleEnded = new CountDownLatch(1);
  private final Object answers = new Object();
  private final long startNanos;
  private final long due;

  private Flood(double ratePerSecond, Duration duration, Function<Throwable, String> classify) {
    this.ratePerSecond = ratePerSecond;
    this.duration = duration;
    this.classify = classify;
    this.startNanos = System.nanoTime();
    this.due = (long) (duration.toNanos() / (1e9 / ratePerSecond));
  }

  /**
   * Starts sending {@code call} at {@code ratePerSecond} for {@code duration} on a thread of its own, and
   * returns at once. Each answer counts under {@code "OK"}, each failure under {@code classify}'s name for it.
   */
  public static Flood start(String name, Call call, double ratePerSecond, Duration duration,
      Function<Throwable, String> classify) {
    Flood flood = new Flood(ratePerSecond, duration, classify);
    Thread generator = new Thread(() -> flood.drive(call), "flood-" + name);
    generator.setDaemon(true);
    generator.start();
    return flood;
  }

  private void drive(Call call) {
    double intervalNanos = 1e9 / ratePerSecond;
    long end = startNanos + duration.toNanos();
    try {
      for (long i = 0; i < due; i++) {
        long intended = startNanos + (long) (i * intervalNanos);
        long now = parkUntil(intended);
        if (now >= end) {
          break;
        }
        lateness.recordValue(micros(now - intended));
        sent.incrementAndGet();
        long sentAt = now;
        call.start(i).whenComplete((ok, failure) -> {
          long answeredAt = System.nanoTime();
          String outcome = failure == null ? "OK" : classify.apply(failure);
          fromIntended.computeIfAbsent(outcome, o -> recorder()).recordValue(micros(answeredAt - intended));
          fromSent.computeIfAbsent(outcome, o -> recorder()).recordValue(micros(answeredAt - sentAt));
          answered.incrementAndGet();
          synchronized (answers) {
            answers.notifyAll();
          }
        });
      }
    } finally {
      // Also when a call throws instead of failing its future: whoever waits for the schedule is let go.
      scheduleEnded.countDown();
    }
  }

  /**
   * Parks until {@code deadline} ({@link System#nanoTime}); returns the time then. No spinning, unlike
   * {@link OpenLoop}: at thousands of requests per second every wait is shorter than OpenLoop's spin, so
   * the generator would keep a core busy, half of a 2-core machine, taken from what it measures. A park
   * wakes some tens of microseconds late; the latency counts that from the intended start, and the
   * lateness shows it.
   */
  private static long parkUntil(long deadline) {
    long now;
    while ((now = System.nanoTime()) < deadline) {
      LockSupport.parkNanos(deadline - now);
    }
    return now;
  }

  private static Recorder recorder() {
    return new Recorder(TimeUnit.MINUTES.toMicros(1), 3);
  }

  private static long micros(long nanos) {
    return Math.min(TimeUnit.MINUTES.toMicros(1), Math.max(1, TimeUnit.NANOSECONDS.toMicros(nanos)));
  }

  /** Waits until the last request was sent (or the schedule's end passed); returns the schedule's end (nanoTime). */
  public long awaitSchedule() throws InterruptedException {
    scheduleEnded.await();
    return startNanos + duration.toNanos();
  }

  /** Waits up to {@code timeout} for the answers of every request sent; true when all came. */
  public boolean awaitAnswers(Duration timeout) throws InterruptedException {
    scheduleEnded.await();
    long giveUp = System.nanoTime() + timeout.toNanos();
    synchronized (answers) {
      while (answered.get() < sent.get()) {
        long left = giveUp - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(answers, left);
      }
    }
    return true;
  }

  /** What was sent and answered so far. Call once, after {@link #awaitAnswers}. */
  public Result result() {
    Histogram late = lateness.getIntervalHistogram();
    return new Result(ratePerSecond, due, sent.get(), sent.get() / seconds(), sent.get() - answered.get(), seconds(),
        Summary.percentile(late, 50), Summary.percentile(late, 99), late.getTotalCount() == 0 ? 0 : late.getMaxValue() / 1000.0,
        histograms(fromIntended), histograms(fromSent));
  }

  private double seconds() {
    return duration.toNanos() / 1e9;
  }

  private static Map<String, Histogram> histograms(Map<String, Recorder> recorders) {
    Map<String, Histogram> histograms = new TreeMap<>();
    recorders.forEach((outcome, recorder) -> histograms.put(outcome, recorder.getIntervalHistogram()));
    return histograms;
  }

  /**
   * What one flood did.
   *
   * @param askedPerSecond    the rate it was asked for
   * @param due               requests the schedule held
   * @param sent              requests the generator sent before the schedule's end
   * @param offeredPerSecond  {@code sent} over the duration: what the system was really offered
   * @param unanswered        sent requests without an answer when the result was taken
   * @param seconds           the schedule's duration
   * @param lateP50Ms         how late the generator sent a request (ms), median
   * @param lateP99Ms         the same, 99th percentile
   * @param lateMaxMs         the same, worst
   * @param fromIntended      each outcome's latencies (µs) from the request's intended start
   * @param fromSent          the same from the moment it was sent
   */
  public record Result(double askedPerSecond, long due, long sent, double offeredPerSecond, long unanswered,
      double seconds, double lateP50Ms, double lateP99Ms, double lateMaxMs, Map<String, Histogram> fromIntended,
      Map<String, Histogram> fromSent) {

    /** Answers whose outcome {@code outcomes} accepts. */
    public long count(Predicate<String> outcomes) {
      return pooled(fromIntended, outcomes).getTotalCount();
    }

    /** Answers per outcome. */
    public Map<String, Long> counts() {
      Map<String, Long> counts = new TreeMap<>();
      fromIntended.forEach((outcome, h) -> counts.put(outcome, h.getTotalCount()));
      return counts;
    }

    /** The latencies of the outcomes {@code outcomes} accepts, pooled: from the intended start, or from sending. */
    public Summary summary(String name, Predicate<String> outcomes, boolean sinceSent) {
      return Summary.of(name, pooled(sinceSent ? fromSent : fromIntended, outcomes), seconds, Map.of());
    }

    private static Histogram pooled(Map<String, Histogram> byOutcome, Predicate<String> outcomes) {
      Histogram pool = LatencyStats.histogram();
      byOutcome.forEach((outcome, h) -> {
        if (outcomes.test(outcome)) {
          pool.add(h);
        }
      });
      return pool;
    }
  }
}
