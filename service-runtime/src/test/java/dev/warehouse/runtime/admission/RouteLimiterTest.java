package dev.warehouse.runtime.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.concurrency.limits.Limiter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-route limits on a stepped clock: no sleeps, no wall-clock timing. */
class RouteLimiterTest {

  private final AtomicLong now = new AtomicLong(TimeUnit.SECONDS.toNanos(1));
  private final RouteLimiter limiter = new RouteLimiter("test", List.of("GetOrder", "ListCustomerOrders"),
      AdmissionConfig.DEFAULT, new SimpleMeterRegistry(), now::get);

  @Test
  void overAStoreWhoseLatencyHolds_aFloodGrowsTheLimit() {
    int initial = limiter.limit("GetOrder");
    ArrayDeque<Started> inFlight = new ArrayDeque<>();
    long step = TimeUnit.MILLISECONDS.toNanos(1);
    long end = now.get() + Duration.ofSeconds(30).toNanos();
    while (now.get() < end) {
      admitAll("GetOrder", inFlight);
      now.addAndGet(step);
      while (!inFlight.isEmpty() && now.get() - inFlight.peekFirst().at() >= TimeUnit.MILLISECONDS.toNanos(5)) {
        inFlight.removeFirst().slot().onSuccess(); // every call takes 5 ms, however many there are
      }
    }
    assertThat(limiter.limit("GetOrder")).isGreaterThan(initial);
    assertThat(limiter.limit("ListCustomerOrders")).as("another route's limit is its own").isEqualTo(initial);
  }

  @Test
  void oneRouteAtItsLimit_leavesAnotherRouteItsSlots() {
    ArrayDeque<Started> held = new ArrayDeque<>();
    admitAll("GetOrder", held);
    assertThat(held).hasSize(limiter.limit("GetOrder"));
    assertThat(limiter.acquire("GetOrder")).as("over its limit").isEmpty();
    assertThat(limiter.acquire("ListCustomerOrders")).isPresent();
  }

  @Test
  void aFinishedCallGivesItsSlotBack_whateverItsOutcome() {
    RouteLimiter two = new RouteLimiter("test", List.of("GetOrder"), AdmissionConfig.fixed(2), new SimpleMeterRegistry(),
        now::get);
    for (RouteLimiter.Outcome outcome : RouteLimiter.Outcome.values()) {
      Limiter.Listener first = two.acquire("GetOrder").orElseThrow();
      Limiter.Listener second = two.acquire("GetOrder").orElseThrow();
      assertThat(two.acquire("GetOrder")).as("over the limit").isEmpty();
      RouteLimiter.release(first, outcome);
      Limiter.Listener third = two.acquire("GetOrder").orElseThrow();
      RouteLimiter.release(second, RouteLimiter.Outcome.SUCCESS);
      RouteLimiter.release(third, RouteLimiter.Outcome.SUCCESS);
    }
  }

  private void admitAll(String route, ArrayDeque<Started> admitted) {
    Optional<Limiter.Listener> slot;
    while ((slot = limiter.acquire(route)).isPresent()) {
      admitted.add(new Started(now.get(), slot.get()));
    }
  }

  private record Started(long at, Limiter.Listener slot) {}
}
