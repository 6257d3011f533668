package dev.warehouse.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Assertions on how long a service keeps working for one call, read from its recorded DynamoDB requests. */
public final class CallBounds {

  private CallBounds() {}

  /**
   * Asserts that by {@code bound} after {@code startedNanos} every DynamoDB request the service made
   * has ended (answered, timed out or cancelled), and that none starts in the half second after.
   */
  public static void assertNoWorkPast(RecordingInterceptor recorder, long startedNanos, Duration bound) {
    sleepUntil(startedNanos + bound.toNanos());
    int started = recorder.requests().size();
    assertThat(recorder.ended()).as("DynamoDB requests ended %s after the call began", bound).isEqualTo(started);
    sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500));
    assertThat(recorder.requests()).as("DynamoDB requests started after %s", bound).hasSize(started);
  }

  private static void sleepUntil(long nanoTime) {
    long left;
    while ((left = nanoTime - System.nanoTime()) > 0) {
      try {
        TimeUnit.NANOSECONDS.sleep(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
