package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The DynamoDB client's timer: every call schedules two timeouts and cancels them when it ends, and
 * with one call at a time that used to wake the timer thread once per call, on the call's path.
 */
@Tag("integration")
class DynamoClientsTimerTest {

  @Test
  void timeoutsScheduledAndCancelledOneCallAtATime_doNotWakeTheTimerThread() throws Exception {
    ScheduledExecutorService timer = DynamoClients.timer("timer-test-a");
    try {
      timer.schedule(() -> { }, 0, TimeUnit.MILLISECONDS).get(); // the thread exists and waits
      long before = wakeUps("timer-test-a");
      for (int call = 0; call < 200; call++) {
        // a call's attempt and call timeouts, as the SDK schedules them, cancelled as the call ends
        ScheduledFuture<?> attempt = timer.schedule(() -> { }, 1, TimeUnit.SECONDS);
        ScheduledFuture<?> whole = timer.schedule(() -> { }, 3, TimeUnit.SECONDS);
        Thread.sleep(1); // the call's own time: the timer thread, real, must stay asleep through it
        attempt.cancel(false);
        whole.cancel(false);
      }
      // Without the no-op at the head of the queue this is one wake-up per call (docs/performance-log.md).
      assertThat(wakeUps("timer-test-a") - before).isLessThan(20);
    } finally {
      timer.shutdownNow();
    }
  }

  @Test
  void aTimeoutShorterThanTheNoOpsPeriod_stillFiresOnTime() throws Exception {
    ScheduledExecutorService timer = DynamoClients.timer("timer-test-b");
    try {
      // Ordered against a task due when the no-op is, not timed against the wall clock (which load moves): a
      // timeout shorter than the no-op's period is not held back until the no-op's turn.
      java.util.List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
      CountDownLatch both = new CountDownLatch(2);
      timer.schedule(() -> { ran.add("at the no-op's period"); both.countDown(); },
          DynamoClients.TIMER_HEAD.toMillis(), TimeUnit.MILLISECONDS);
      timer.schedule(() -> { ran.add("short timeout"); both.countDown(); }, 50, TimeUnit.MILLISECONDS);
      assertThat(both.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(ran).containsExactly("short timeout", "at the no-op's period");
    } finally {
      timer.shutdownNow();
    }
  }

  /** Times the thread named {@code name} has gone to sleep and been woken (Linux: /proc). */
  private static long wakeUps(String name) throws IOException {
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
      for (Path task : tasks) {
        if (Files.readString(task.resolve("comm")).trim().equals(name)) {
          for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
              return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
          }
        }
      }
    }
    throw new IllegalStateException("no thread named " + name);
  }
}
