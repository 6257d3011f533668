package dev.warehouse.simulation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.inventory.domain.OutOfStockException;
import dev.warehouse.inventory.domain.PageQuery;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.Reservation.ReleaseCause;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.inventory.domain.ReservationChangedException;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.domain.ReservationRepository;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.ClientFacingException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What every {@link ReservationRepository} does, whatever stores it: its conditions, all-or-nothing writes,
 * what a lost race returns, and reads after writes. Run against the simulation's in-memory repository and
 * against the DynamoDB one on the strict moto, so the fake the simulation trusts cannot drift from the real.
 */
abstract class ReservationRepositoryContract {

  static final Instant T = Instant.parse("2026-12-05T09:00:00Z");

  abstract ReservationRepository repository();

  /** Puts {@code quantity} units of a new product at W1, none reserved; returns the product. */
  abstract String stocked(long quantity);

  /** {quantity, reserved} of the product at W1, read strongly. */
  abstract long[] stock(String product);

  /** Waits for {@code call}'s outcome. */
  abstract <T> T await(CompletableFuture<T> call);

  private static String order() {
    return "O-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static Reservation held(String order, String product, long units, Instant expires) {
    return new Reservation(order, State.HELD, List.of(new ReservationLine(product, "W1", units)), expires, Optional.empty(),
        T, T);
  }

  private Throwable failure(CompletableFuture<?> call) {
    try {
      await(call);
    } catch (RuntimeException e) {
      return Failures.cause(e);
    }
    throw new AssertionError("the call should have failed");
  }

  @Test
  void aHold_takesItsUnits_andIsReadBack_andASecondHoldOfTheOrder_findsIt() {
    String product = stocked(10);
    String order = order();
    await(repository().hold(held(order, product, 4, T.plusSeconds(60))));
    assertThat(await(repository().find(order, true))).get().extracting(Reservation::state).isEqualTo(State.HELD);
    assertThat(stock(product)).containsExactly(10, 4);
    assertThat(failure(repository().hold(held(order, product, 1, T.plusSeconds(60)))))
        .isInstanceOfSatisfying(ReservationChangedException.class,
            changed -> assertThat(changed.found()).get().extracting(Reservation::lines)
                .isEqualTo(List.of(new ReservationLine(product, "W1", 4))));
    assertThat(stock(product)).containsExactly(10, 4);
  }

  @Test
  void aShortHold_isOutOfStock_withItsNumbers_andWritesNothing() {
    String product = stocked(3);
    String order = order();
    assertThat(failure(repository().hold(held(order, product, 5, T.plusSeconds(60)))))
        .isInstanceOfSatisfying(OutOfStockException.class, out -> assertThat(out.shortages())
            .containsExactly(new OutOfStockException.Shortage(product, "W1", 5, 3)));
    assertThat(await(repository().find(order, true))).isEmpty();
    assertThat(stock(product)).containsExactly(3, 0);
    assertThat(failure(repository().hold(held(order(), "P-none-" + UUID.randomUUID(), 1, T.plusSeconds(60)))))
        .isInstanceOfSatisfying(ClientFacingException.class, e -> assertThat(e.reason()).isEqualTo("PRODUCT_INVENTORY_NOT_FOUND"));
  }

  @Test
  void aConfirm_onlyOfAHeldReservation_andALostOneCarriesWhatItFound() {
    String product = stocked(10);
    String order = order();
    await(repository().hold(held(order, product, 2, T.plusSeconds(60))));
    assertThat(await(repository().confirm(order, T.plusSeconds(1))).state()).isEqualTo(State.CONFIRMED);
    assertThat(failure(repository().confirm(order, T.plusSeconds(2))))
        .isInstanceOfSatisfying(ReservationChangedException.class,
            changed -> assertThat(changed.found()).get().extracting(Reservation::state).isEqualTo(State.CONFIRMED));
    assertThat(failure(repository().confirm(order(), T))).isInstanceOfSatisfying(ReservationChangedException.class,
        changed -> assertThat(changed.found()).isEmpty());
  }

  @Test
  void anEnd_onlyFromTheStateRead_movesTheStockOnce() {
    String product = stocked(10);
    String shipped = order();
    String released = order();
    await(repository().hold(held(shipped, product, 3, T.plusSeconds(60))));
    await(repository().hold(held(released, product, 2, T.plusSeconds(60))));
    Reservation confirmed = await(repository().confirm(shipped, T));
    await(repository().end(confirmed, confirmed.ended(State.COMMITTED, Optional.empty(), T)));
    assertThat(stock(product)).as("the shipped units left").containsExactly(7, 2);
    Reservation hold = await(repository().find(released, true)).orElseThrow();
    await(repository().end(hold, hold.ended(State.RELEASED, Optional.of(ReleaseCause.ORDER_REJECTED), T)));
    assertThat(stock(product)).containsExactly(7, 0);
    // A second end from the same read loses: nothing moves twice.
    assertThat(failure(repository().end(hold, hold.ended(State.RELEASED, Optional.of(ReleaseCause.HOLD_EXPIRED), T))))
        .isInstanceOfSatisfying(ReservationChangedException.class,
            changed -> assertThat(changed.found()).get().extracting(Reservation::state).isEqualTo(State.RELEASED));
    assertThat(stock(product)).containsExactly(7, 0);
  }

  @Test
  void aTombstone_onlyWhereThereIsNone_andALateHoldFindsIt() {
    String product = stocked(10);
    String order = order();
    await(repository().tombstone(Reservation.tombstone(order, T)));
    assertThat(failure(repository().hold(held(order, product, 1, T.plusSeconds(60)))))
        .isInstanceOfSatisfying(ReservationChangedException.class,
            changed -> assertThat(changed.found()).get().extracting(Reservation::state).isEqualTo(State.RELEASED));
    assertThat(stock(product)).containsExactly(10, 0);
    assertThat(failure(repository().tombstone(Reservation.tombstone(order, T))))
        .isInstanceOf(ReservationChangedException.class);
  }

  @Test
  void expiredHolds_areListed_onlyWhileHeldAndPastTheirExpiry() {
    String product = stocked(10);
    String expired = order();
    String fresh = order();
    String confirmed = order();
    Instant far = T.plusSeconds(1_000_000);
    await(repository().hold(held(expired, product, 1, far.minusSeconds(10))));
    await(repository().hold(held(fresh, product, 1, far.plusSeconds(600))));
    await(repository().hold(held(confirmed, product, 1, far.minusSeconds(10))));
    await(repository().confirm(confirmed, T));
    // The index is eventually consistent: the listing may lag, never list what it should not.
    dev.warehouse.testing.Eventually.await(() -> await(repository().listExpiredHolds(new PageQuery(100, "", false), far))
        .items().stream().map(Reservation::orderId).filter(id -> List.of(expired, fresh, confirmed).contains(id)).toList(),
        ids -> ids.equals(List.of(expired)));
  }
}
