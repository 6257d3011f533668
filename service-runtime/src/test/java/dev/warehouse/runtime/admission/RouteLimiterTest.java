package dev.warehouse.runtime.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.concurrency.limits.Limiter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.testing.ManualScheduler;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-route limits on a stepped clock: no sleeps, no wall-clock timing. */
class RouteLimiterTest {

  private final AtomicLong now = new AtomicLong(TimeUnit.SECONDS.toNanos(1));
  private final ManualScheduler timer = new ManualScheduler();
  private final RouteLimiter limiter = new RouteLimiter("test", List.of("GetOrder", "ListCustomerOrders"),
      AdmissionConfig.DEFAULT, new SimpleMeterRegistry(), timer, now::get);

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
        timer, now::get);
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

  // ------------------------------------------------------------------------------------ waiting for a slot

  private static final long NO_DEADLINE = Long.MAX_VALUE;

  /** The default longest wait, on the scheduler's clock. */
  private RouteLimiter twoSlots(AdmissionConfig config, SimpleMeterRegistry meters) {
    return new RouteLimiter("test", List.of("PlaceOrder"), config, meters, timer, timer::nanoTime);
  }

  private static CompletableFuture<Limiter.Listener> admit(RouteLimiter limiter, long timeLeftNanos) {
    return limiter.admit("PlaceOrder", timeLeftNanos, "the service is at its concurrency limit", Map.of());
  }

  @Test
  void aBurstOverTheLimitWaits_andEachWaitingCallGetsTheNextSlotGivenBack() {
    RouteLimiter limiter = twoSlots(AdmissionConfig.fixed(2), new SimpleMeterRegistry());
    List<CompletableFuture<Limiter.Listener>> burst = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      burst.add(admit(limiter, NO_DEADLINE));
    }
    assertThat(burst).filteredOn(CompletableFuture::isDone).hasSize(2);
    assertThat(limiter.waiting("PlaceOrder")).isEqualTo(3);
    timer.advance(Duration.ofMillis(100));
    RouteLimiter.release(burst.get(0).join(), RouteLimiter.Outcome.SUCCESS);
    assertThat(burst.get(2)).as("first in, first out while the queue drains quickly").isCompleted();
    assertThat(burst.get(3)).isNotDone();
    RouteLimiter.release(burst.get(1).join(), RouteLimiter.Outcome.DROPPED);
    RouteLimiter.release(burst.get(2).join(), RouteLimiter.Outcome.IGNORED);
    assertThat(burst).allMatch(call -> call.isDone() && !call.isCompletedExceptionally());
    assertThat(limiter.waiting("PlaceOrder")).isZero();
  }

  /**
   * A cold process's first burst at the defaults (its first limit 20, a 10 s wait): 40 PlaceOrders at once with
   * a 30 s deadline, each taking 3 s (a cold stack's first calls on moto), are all served and none is refused.
   * Through real processes, the machine's speed decides whether the first 20 finish within the wait; here
   * only the policy does.
   */
  @Test
  void aColdBurstOfTwiceTheFirstLimit_atTheDefaults_isServedWhole() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    RouteLimiter limiter = twoSlots(AdmissionConfig.DEFAULT, meters);
    List<CompletableFuture<Limiter.Listener>> burst = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      burst.add(admit(limiter, Duration.ofSeconds(30).toNanos()));
    }
    assertThat(burst).filteredOn(CompletableFuture::isDone).hasSize(20);
    assertThat(limiter.waiting("PlaceOrder")).isEqualTo(20);
    List<CompletableFuture<Limiter.Listener>> ended = new ArrayList<>();
    for (int round = 0; round < 2; round++) {
      timer.advance(Duration.ofSeconds(3));
      List<CompletableFuture<Limiter.Listener>> running = burst.stream()
          .filter(call -> call.isDone() && !call.isCompletedExceptionally() && !ended.contains(call)).toList();
      for (CompletableFuture<Limiter.Listener> call : running) {
        ended.add(call);
        RouteLimiter.release(call.join(), RouteLimiter.Outcome.SUCCESS);
      }
    }
    assertThat(ended).hasSize(40);
    assertThat(meters.get("admission.calls").tag("outcome", "rejected").counter().count()).isZero();
  }

  @Test
  void aCallThatWaitsTooLong_isRefusedWithTheRetryHint_andCountedOnce() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    RouteLimiter limiter = twoSlots(AdmissionConfig.fixed(1), meters);
    Limiter.Listener held = admit(limiter, NO_DEADLINE).join();
    CompletableFuture<Limiter.Listener> waiting = admit(limiter, NO_DEADLINE);
    timer.advance(AdmissionConfig.DEFAULT_MAX_WAIT.minusMillis(1));
    assertThat(waiting).isNotDone();
    timer.advance(Duration.ofMillis(1));
    assertThat(waiting).isCompletedExceptionally();
    ResourceExhaustedException refusal = refusalOf(waiting);
    assertThat(refusal.reason()).isEqualTo("OVERLOADED");
    assertThat(refusal.retryDelay()).contains(AdmissionConfig.DEFAULT_RETRY_AFTER);
    assertThat(meters.get("admission.calls").tag("outcome", "rejected").counter().count()).isEqualTo(1.0);
    RouteLimiter.release(held, RouteLimiter.Outcome.SUCCESS);
    assertThat(limiter.waiting("PlaceOrder")).isZero();
    assertThat(admit(limiter, NO_DEADLINE)).as("the refused call took no slot").isCompleted();
  }

  @Test
  void aCallWaitsAtMostHalfTheTimeItsCallerHasLeft() {
    RouteLimiter limiter = twoSlots(AdmissionConfig.fixed(1), new SimpleMeterRegistry());
    admit(limiter, NO_DEADLINE).join();
    CompletableFuture<Limiter.Listener> waiting = admit(limiter, Duration.ofMillis(300).toNanos());
    timer.advance(Duration.ofMillis(149));
    assertThat(waiting).isNotDone();
    timer.advance(Duration.ofMillis(1));
    assertThat(waiting).isCompletedExceptionally();
  }

  @Test
  void noWait_orAFullQueue_refusesAtOnce() {
    RouteLimiter noWait = twoSlots(AdmissionConfig.fixed(1).withMaxWait(Duration.ZERO), new SimpleMeterRegistry());
    admit(noWait, NO_DEADLINE).join();
    assertThat(admit(noWait, NO_DEADLINE)).isCompletedExceptionally();

    AdmissionConfig oneWaits = new AdmissionConfig(Optional.of(1), 1, 1, AdmissionConfig.DEFAULT_RETRY_AFTER,
        AdmissionConfig.DEFAULT_MAX_WAIT, 1, AdmissionConfig.SERVICE_MAX_STREAMS);
    RouteLimiter short1 = twoSlots(oneWaits, new SimpleMeterRegistry());
    admit(short1, NO_DEADLINE).join();
    assertThat(admit(short1, NO_DEADLINE)).isNotDone();
    assertThat(admit(short1, NO_DEADLINE)).as("past the queue's length").isCompletedExceptionally();
  }

  @Test
  void onceTheOldestHasWaitedHalfTheLongestWait_theNewestIsServedFirst() {
    RouteLimiter limiter = twoSlots(AdmissionConfig.fixed(1), new SimpleMeterRegistry());
    Limiter.Listener held = admit(limiter, NO_DEADLINE).join();
    CompletableFuture<Limiter.Listener> oldest = admit(limiter, NO_DEADLINE);
    timer.advance(AdmissionConfig.DEFAULT_MAX_WAIT.dividedBy(2));
    CompletableFuture<Limiter.Listener> newest = admit(limiter, NO_DEADLINE);
    RouteLimiter.release(held, RouteLimiter.Outcome.SUCCESS);
    assertThat(newest).as("a standing queue: last in, first out").isCompleted();
    assertThat(oldest).isNotDone();
    timer.advance(AdmissionConfig.DEFAULT_MAX_WAIT);
    assertThat(oldest).as("refused when its own wait ends").isCompletedExceptionally();
  }

  @Test
  void aBurstQueuedAtOnce_keepsTheWholeWait_butOnceTheQueueHasStoodANewCallWaitsOnlyTheTarget() {
    RouteLimiter limiter = twoSlots(AdmissionConfig.fixed(1), new SimpleMeterRegistry());
    admit(limiter, NO_DEADLINE).join();
    List<CompletableFuture<Limiter.Listener>> burst = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      burst.add(admit(limiter, NO_DEADLINE));
    }
    // The queue has stood since its oldest passed the target (0.1 s); a second on, it has stood long enough.
    timer.advance(RouteLimiter.STANDING_TARGET.plus(RouteLimiter.STANDING_INTERVAL).minusMillis(1));
    CompletableFuture<Limiter.Listener> early = admit(limiter, NO_DEADLINE);
    timer.advance(Duration.ofMillis(1));
    CompletableFuture<Limiter.Listener> late = admit(limiter, NO_DEADLINE);
    timer.advance(RouteLimiter.STANDING_TARGET);
    assertThat(late).as("arrived into a queue that had stood: refused after the target").isCompletedExceptionally();
    assertThat(early).as("arrived a moment before: the whole wait").isNotDone();
    assertThat(burst).as("queued at once: the whole wait").allSatisfy(call -> assertThat(call).isNotDone());
  }

  @Test
  void callsThatGiveTheirSlotStraightBack_handOverWithoutRecursing() {
    RouteLimiter limiter = twoSlots(new AdmissionConfig(Optional.of(1), 1, 1, AdmissionConfig.DEFAULT_RETRY_AFTER,
        AdmissionConfig.DEFAULT_MAX_WAIT, 100_000, AdmissionConfig.SERVICE_MAX_STREAMS), new SimpleMeterRegistry());
    Limiter.Listener held = admit(limiter, NO_DEADLINE).join();
    int[] served = {0};
    for (int i = 0; i < 50_000; i++) {
      admit(limiter, NO_DEADLINE).thenAccept(slot -> {
        served[0]++;
        RouteLimiter.release(slot, RouteLimiter.Outcome.SUCCESS); // the call ends at once
      });
    }
    RouteLimiter.release(held, RouteLimiter.Outcome.SUCCESS);
    assertThat(served[0]).isEqualTo(50_000);
    assertThat(limiter.waiting("PlaceOrder")).isZero();
  }

  private static ResourceExhaustedException refusalOf(CompletableFuture<?> refused) {
    try {
      refused.join();
    } catch (CompletionException e) {
      return (ResourceExhaustedException) e.getCause();
    }
    throw new AssertionError("not refused");
  }

  private void admitAll(String route, ArrayDeque<Started> admitted) {
    Optional<Limiter.Listener> slot;
    while ((slot = limiter.acquire(route)).isPresent()) {
      admitted.add(new Started(now.get(), slot.get()));
    }
  }

  private record Started(long at, Limiter.Listener slot) {}
}
