package dev.warehouse.inventory.expiry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.domain.InMemoryReservations;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.Reservation.ReleaseCause;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.domain.Reservations;
import dev.warehouse.runtime.error.UnavailableException;
import dev.warehouse.testing.LogRecords;
import dev.warehouse.testing.TestClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The expiry loop, sweep by sweep, on in-memory reservations with an injected clock: it pages through every
 * expired hold, never runs two sweeps at once, and one hold's failing release (or a listing's failure) costs
 * only that hold (or that sweep), never the loop. {@link HoldExpiryTest} runs it on the strict moto.
 */
class HoldExpiryLoopTest {

  private static final Instant T0 = Instant.parse("2026-12-05T09:00:00Z");

  private final TestClock clock = new TestClock(T0);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final InMemoryReservations repository = new InMemoryReservations();
  private final Reservations reservations = new Reservations(repository, clock, Duration.ofSeconds(60), meters);
  // Only a sweep's deadline is scheduled on it (cancelled when the sweep ends); nothing here waits for it.
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final HoldExpiry expiry = new HoldExpiry(reservations, clock, Duration.ofSeconds(10), scheduler, meters);

  HoldExpiryLoopTest() {
    repository.stock("P-1", "W-1");
  }

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  /** The n-th oldest expired hold: one unit, expired ten minutes before T0, n milliseconds apart. */
  private String expiredHold(int n) {
    String id = String.format("O-%03d", n);
    Instant created = T0.minusSeconds(660);
    repository.put(new Reservation(id, State.HELD, List.of(new ReservationLine("P-1", "W-1", 1)),
        T0.minusSeconds(600).plusMillis(n), Optional.empty(), created, created));
    return id;
  }

  private void expiredHolds(int count) {
    for (int n = 1; n <= count; n++) {
      expiredHold(n);
    }
  }

  private State stateOf(String orderId) {
    return repository.get(orderId).state();
  }

  private List<String> held() {
    return java.util.stream.IntStream.rangeClosed(1, 999).mapToObj(n -> String.format("O-%03d", n))
        .filter(id -> repository.get(id) != null && stateOf(id) == State.HELD).toList();
  }

  private double expired() {
    return meters.get("reservation.holds.expired").counter().count();
  }

  private double lastSuccess() {
    return meters.get("reservation.expiry.last.success.timestamp").gauge().value();
  }

  private static double seconds(Instant t) {
    return t.toEpochMilli() / 1000.0;
  }

  @Test
  void aSweep_goesOnPastTheFirstPage_andReleasesEveryExpiredHold_the101stToo() {
    expiredHolds(2 * HoldExpiry.PAGE_SIZE + 1);
    repository.put(new Reservation("O-999", State.HELD, List.of(new ReservationLine("P-1", "W-1", 1)),
        T0.plusSeconds(60), Optional.empty(), T0, T0));

    assertThat(expiry.sweep().join()).isEqualTo(201);

    assertThat(held()).as("only the hold not yet expired").containsExactly("O-999");
    assertThat(stateOf("O-101")).as("the first of the second page").isEqualTo(State.RELEASED);
    assertThat(stateOf("O-201")).as("alone on the third page").isEqualTo(State.RELEASED);
    assertThat(repository.get("O-201").releaseCause()).contains(ReleaseCause.HOLD_EXPIRED);
    assertThat(repository.reserved("P-1", "W-1")).as("the fresh hold's unit").isEqualTo(1);
    assertThat(repository.listedTokens).hasSize(3).first().isEqualTo("");
    assertThat(repository.listedPageSizes).containsOnly(HoldExpiry.PAGE_SIZE);
    assertThat(expired()).isEqualTo(201);
    assertThat(repository.calls.stream().filter(c -> c.startsWith("end "))).hasSize(201).doesNotHaveDuplicates();
  }

  @Test
  void aTickWhileASweepIsStillGoing_startsNoSecondSweep_andTheFirstTickAfterItEndsDoes() {
    expiredHolds(150);
    // The second page's listing hangs until the test lets it go: the first sweep is still going.
    CompletableFuture<Void> secondPage = new CompletableFuture<>();
    repository.listing = (token, stored) -> token.isEmpty() ? stored.get() : secondPage.thenCompose(go -> stored.get());
    CompletableFuture<Integer> first = expiry.sweep();
    assertThat(first).isNotDone();
    assertThat(repository.listedTokens).hasSize(2);

    CompletableFuture<Integer> overlapping = expiry.sweep();

    assertThat(overlapping).isCompletedWithValue(0);
    assertThat(repository.listedTokens).as("the overlapping tick listed nothing").hasSize(2);
    assertThat(repository.calls.stream().filter(c -> c.startsWith("end "))).as("only the first page").hasSize(100);

    secondPage.complete(null);
    assertThat(first).isCompletedWithValue(150);
    assertThat(repository.calls.stream().filter(c -> c.startsWith("end "))).hasSize(150).doesNotHaveDuplicates();
    assertThat(expiry.sweep()).isCompletedWithValue(0);
    assertThat(repository.listedTokens).as("the next tick after the sweep ended ran a sweep").hasSize(3);
  }

  @Test
  void aReleaseThatFails_isLoggedAndLeftForTheNextSweep_whileTheRestOfItsPageAndTheNextPageAreReleased() {
    expiredHolds(150);
    AtomicBoolean broken = new AtomicBoolean(true);
    repository.failing = (operation, orderId) -> operation.equals("end") && orderId.equals("O-050") && broken.get()
        ? Optional.of(new UnavailableException("DATABASE_UNAVAILABLE", "the transaction failed"))
        : Optional.empty();
    clock.advance(Duration.ofSeconds(10));

    try (LogRecords log = new LogRecords(HoldExpiry.class)) {
      assertThat(expiry.sweep()).isCompletedWithValue(149);
      assertThat(log.events()).anySatisfy(event -> assertThat(event.fields())
          .containsEntry("event", "hold_release_deferred").containsEntry("order_id", "O-050"));
    }

    assertThat(held()).containsExactly("O-050");
    assertThat(stateOf("O-051")).as("after it on its page").isEqualTo(State.RELEASED);
    assertThat(stateOf("O-150")).as("on the next page").isEqualTo(State.RELEASED);
    assertThat(expired()).isEqualTo(149);
    assertThat(lastSuccess()).as("the sweep listed every page").isEqualTo(seconds(clock.instant()));

    broken.set(false);
    clock.advance(Duration.ofSeconds(10));
    assertThat(expiry.sweep()).isCompletedWithValue(1);
    assertThat(held()).isEmpty();
    assertThat(repository.reserved("P-1", "W-1")).isZero();
  }

  @Test
  void aHoldWhoseReadThrows_costsOnlyThatHold_notTheRestOfItsPageNorTheNextPage() {
    expiredHolds(150);
    AtomicBoolean broken = new AtomicBoolean(true);
    // A read that throws instead of failing its future: the sweep must still go on with the others.
    repository.before = (operation, orderId) -> {
      if (operation.equals("find") && orderId.equals("O-050") && broken.get()) {
        throw new IllegalStateException("the read of O-050 threw");
      }
    };

    assertThat(expiry.sweep()).isCompletedWithValue(149);

    assertThat(held()).containsExactly("O-050");
    assertThat(lastSuccess()).isEqualTo(seconds(clock.instant()));
    broken.set(false);
    assertThat(expiry.sweep()).isCompletedWithValue(1);
    assertThat(held()).isEmpty();
  }

  @Test
  void aSweepWhoseListingFails_advancesNoTimestamp_andTheNextSweepRuns() {
    expiredHolds(150);
    repository.listing = (token, stored) -> token.isEmpty() ? stored.get()
        : CompletableFuture.failedFuture(new UnavailableException("DATABASE_UNAVAILABLE", "the query failed"));
    clock.advance(Duration.ofSeconds(10));

    CompletableFuture<Integer> failed = expiry.sweep();

    assertThat(failed).isCompletedExceptionally();
    assertThat(held()).as("the first page was released").hasSize(50);
    assertThat(lastSuccess()).as("still the process's start").isEqualTo(seconds(T0));

    repository.listing = (token, stored) -> stored.get();
    clock.advance(Duration.ofSeconds(10));
    assertThat(expiry.sweep()).isCompletedWithValue(50);
    assertThat(held()).isEmpty();
    assertThat(lastSuccess()).isEqualTo(seconds(T0.plusSeconds(20)));
  }

  @Test
  void aListingThatThrows_failsOnlyItsSweep_andTheNextTickRunsOne() {
    expiredHold(1);
    repository.listing = (token, stored) -> {
      throw new IllegalStateException("the listing threw");
    };

    // As the timer calls it: a sweep that cannot list ends, it does not throw or stay "running".
    assertThat(expiry.sweep()).isCompletedExceptionally();
    assertThat(lastSuccess()).isEqualTo(seconds(T0));

    repository.listing = (token, stored) -> stored.get();
    clock.advance(Duration.ofSeconds(10));
    assertThat(expiry.sweep()).isCompletedWithValue(1);
    assertThat(held()).isEmpty();
    assertThat(lastSuccess()).isEqualTo(seconds(T0.plusSeconds(10)));
  }
}
