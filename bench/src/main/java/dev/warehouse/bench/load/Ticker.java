package dev.warehouse.bench.load;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The load generators' time: what they read, wait for, and wait on answers with. {@link #SYSTEM} is the
 * machine's; the generators' tests step a virtual one, so that what they judge of a schedule does not
 * depend on how busy the machine running them is.
 */
interface Ticker {

  /** The last part of a wait before a request, spun instead of parked: parking wakes late. */
  long SPIN_NANOS = 100_000;

  Ticker SYSTEM = new Ticker() {
    @Override
    public long nanoTime() {
      return System.nanoTime();
    }

    /**
     * Parks, then spins the last {@link #SPIN_NANOS}. Not {@code TimeUnit.sleep}: on Java 17 it rounds up to
     * whole milliseconds, so requests went out late ({@code OpenLoopPacingTest}), a lateness their latency
     * then counted (docs/performance-log.md).
     */
    @Override
    public long waitUntil(long deadline) throws InterruptedException {
      long now;
      while ((now = System.nanoTime()) < deadline) {
        long wait = deadline - now;
        if (wait > SPIN_NANOS) {
          LockSupport.parkNanos(wait - SPIN_NANOS);
          if (Thread.interrupted()) {
            throw new InterruptedException();
          }
        } else {
          Thread.onSpinWait();
        }
      }
      return now;
    }

    @Override
    public boolean await(CountDownLatch latch, long timeoutNanos) throws InterruptedException {
      return latch.await(timeoutNanos, TimeUnit.NANOSECONDS);
    }
  };

  /** The time now, in nanoseconds from an arbitrary origin, as {@link System#nanoTime}. */
  long nanoTime();

  /** Waits until {@code deadline} ({@link #nanoTime}) and returns the time then. */
  long waitUntil(long deadline) throws InterruptedException;

  /** Waits up to {@code timeoutNanos} for {@code latch} to open; true if it did. */
  boolean await(CountDownLatch latch, long timeoutNanos) throws InterruptedException;
}
