package dev.warehouse.testing;

import io.grpc.Deadline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler on time the test moves: tasks run on the test's thread when {@link #advance} reaches
 * them, in order of due time. It is also the clock of whatever it schedules for ({@link #nanoTime()},
 * and a gRPC {@link #ticker()}, so a {@link Deadline} and its cancellation follow the same time).
 * Only {@link #schedule(Runnable, long, TimeUnit)} is supported: it is all that resilience4j's retry
 * and gRPC's deadlines use.
 */
public final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {

  private final PriorityQueue<Task> queue = new PriorityQueue<>();
  private final List<Duration> delays = new ArrayList<>();
  private long now;
  private long sequence;

  public long nanoTime() {
    return now;
  }

  public Deadline.Ticker ticker() {
    return new Deadline.Ticker() {
      @Override
      public long nanoTime() {
        return now;
      }
    };
  }

  /** The delays of every task scheduled so far, in the order they were asked for. */
  public List<Duration> delays() {
    return Collections.unmodifiableList(delays);
  }

  /** Tasks not yet run nor cancelled. */
  public int pending() {
    return (int) queue.stream().filter(task -> !task.cancelled).count();
  }

  /** Moves time forward by {@code duration}, running each task that falls due, at its due time. */
  public void advance(Duration duration) {
    long until = now + duration.toNanos();
    for (Task next = queue.peek(); next != null && next.due <= until; next = queue.peek()) {
      queue.poll();
      now = Math.max(now, next.due);
      if (!next.cancelled) {
        next.done = true;
        next.task.run();
      }
    }
    now = until;
  }

  /** Runs every task that is due now or ever will be, moving time to each in turn. */
  public void runAll() {
    while (pending() > 0) {
      Task next = queue.stream().filter(task -> !task.cancelled).min(Task::compareTo).orElseThrow();
      advance(Duration.ofNanos(next.due - now));
    }
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    delays.add(Duration.ofNanos(unit.toNanos(delay)));
    Task task = new Task(command, now + Math.max(0, unit.toNanos(delay)), sequence++);
    queue.add(task);
    return task;
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void execute(Runnable command) {
    schedule(command, 0, TimeUnit.NANOSECONDS);
  }

  @Override
  public void shutdown() {}

  @Override
  public List<Runnable> shutdownNow() {
    return List.of();
  }

  @Override
  public boolean isShutdown() {
    return false;
  }

  @Override
  public boolean isTerminated() {
    return false;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return true;
  }

  private final class Task implements ScheduledFuture<Object> {
    final Runnable task;
    final long due;
    final long order;
    boolean cancelled;
    boolean done;

    Task(Runnable task, long due, long order) {
      this.task = task;
      this.due = due;
      this.order = order;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(due - now, TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed other) {
      Task that = (Task) other;
      return due != that.due ? Long.compare(due, that.due) : Long.compare(order, that.order);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (done) {
        return false;
      }
      cancelled = true;
      return true;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public boolean isDone() {
      return done || cancelled;
    }

    @Override
    public Object get() {
      throw new UnsupportedOperationException();
    }

    @Override
    public Object get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }
  }
}
