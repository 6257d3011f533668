package dev.warehouse.inventory.domain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.domain.Reservation.ReleaseCause;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.NotFoundException;
import dev.warehouse.testing.TestClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The reservations' use cases on an in-memory repository, with an injected clock: what a confirm of a hold
 * released first answers, what a line not stocked answers, and how many rounds a call whose reservation
 * keeps changing gets before it gives up.
 */
class ReservationsUseCasesTest {

  private static final Instant T0 = Instant.parse("2026-12-05T09:00:00Z");
  private static final List<ReservationLine> LINES = List.of(new ReservationLine("P-1", "W-1", 2));

  private final TestClock clock = new TestClock(T0);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final InMemoryReservations repository = new InMemoryReservations();
  private final Reservations reservations = new Reservations(repository, clock, Duration.ofSeconds(60), meters);

  ReservationsUseCasesTest() {
    repository.stock("P-1", "W-1");
  }

  private static Throwable failureOf(CompletableFuture<?> call) {
    assertThat(call).isCompletedExceptionally();
    return Failures.cause(call.handle((ok, failure) -> failure).join());
  }

  private double counted(String operation, String outcome) {
    var counter = meters.find("reservations").tags("operation", operation, "outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  private long calls(String operation) {
    return repository.calls.stream().filter(c -> c.startsWith(operation + " ")).count();
  }

  @Test
  void aHoldReleasedBeforeItsConfirm_isRefusedReleased_andStaysReleased() {
    reservations.reserve("O-1", LINES, Optional.of(Duration.ofSeconds(60))).join();
    clock.advance(Duration.ofSeconds(61));
    assertThat(reservations.expire("O-1", clock.instant()).join()).as("the expiry loop released it").isTrue();

    Throwable refused = failureOf(reservations.confirm("O-1"));

    assertThat(refused).isInstanceOfSatisfying(FailedPreconditionException.class,
        e -> assertThat(e.reason()).isEqualTo("RESERVATION_RELEASED"));
    assertThat(repository.get("O-1").state()).isEqualTo(State.RELEASED);
    assertThat(repository.get("O-1").releaseCause()).contains(ReleaseCause.HOLD_EXPIRED);
    assertThat(repository.reserved("P-1", "W-1")).isZero();
    assertThat(counted("confirm", "RESERVATION_RELEASED")).isEqualTo(1);
  }

  @Test
  void aLineNotStockedAtItsWarehouse_isNotFound_namingIt_andNothingIsHeld() {
    List<ReservationLine> lines = List.of(new ReservationLine("P-1", "W-1", 2), new ReservationLine("P-9", "W-2", 1));

    Throwable refused = failureOf(reservations.reserve("O-1", lines, Optional.empty()));

    assertThat(refused).isInstanceOfSatisfying(NotFoundException.class, e -> {
      assertThat(e.reason()).isEqualTo("PRODUCT_INVENTORY_NOT_FOUND");
      assertThat(e.metadata()).isEqualTo(Map.of("product_id", "P-9", "warehouse_id", "W-2"));
    });
    assertThat(repository.get("O-1")).isNull();
    assertThat(repository.reserved("P-1", "W-1")).isZero();
    assertThat(counted("reserve", "PRODUCT_INVENTORY_NOT_FOUND")).isEqualTo(1);
  }

  /** What the write finds when the reservation changed under it: the data layer's conflict, or another state. */
  private static Function<Reservation, RuntimeException> change(String kind) {
    return kind.equals("conflict")
        ? found -> new AbortedException("TRANSACTION_CONFLICT", "a conflicting transaction was in progress; retry")
        : found -> new ReservationChangedException(found.orderId(), Optional.of(found));
  }

  @ParameterizedTest
  @ValueSource(strings = {"conflict", "changed"})
  void aReleaseWhoseReservationKeepsChanging_givesUpAfterItsRounds_abortedConcurrentUpdate(String kind) {
    Reservation held = reservations.reserve("O-1", LINES, Optional.empty()).join();
    repository.failing = (operation, orderId) -> operation.equals("end")
        ? Optional.of(change(kind).apply(held)) : Optional.empty();
    repository.calls.clear();

    Throwable gaveUp = failureOf(reservations.release("O-1", ReleaseCause.ORDER_CANCELLED));

    assertThat(gaveUp).isInstanceOfSatisfying(AbortedException.class,
        e -> assertThat(e.reason()).isEqualTo("CONCURRENT_UPDATE"));
    assertThat(calls("find")).as("one fresh read per round").isEqualTo(Reservations.ROUNDS);
    assertThat(calls("end")).isEqualTo(Reservations.ROUNDS);
    assertThat(repository.get("O-1").state()).isEqualTo(State.HELD);
    assertThat(repository.reserved("P-1", "W-1")).isEqualTo(2);
    assertThat(counted("release", "CONCURRENT_UPDATE")).isEqualTo(1);
  }

  @Test
  void aCommitWhoseWriteConflictsInEveryRoundButTheLast_isCommitted() {
    reservations.reserve("O-1", LINES, Optional.empty()).join();
    reservations.confirm("O-1").join();
    AtomicInteger conflicts = new AtomicInteger(Reservations.ROUNDS - 1);
    repository.failing = (operation, orderId) -> operation.equals("end") && conflicts.getAndDecrement() > 0
        ? Optional.of(new AbortedException("TRANSACTION_CONFLICT", "a conflicting transaction was in progress; retry"))
        : Optional.empty();
    repository.calls.clear();

    Reservation committed = reservations.commit("O-1").join();

    assertThat(committed.state()).isEqualTo(State.COMMITTED);
    assertThat(calls("end")).isEqualTo(Reservations.ROUNDS);
    assertThat(repository.reserved("P-1", "W-1")).isZero();
    assertThat(counted("commit", "ok")).isEqualTo(1);
  }
}
