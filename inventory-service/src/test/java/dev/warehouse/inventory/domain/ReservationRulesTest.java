package dev.warehouse.inventory.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.inventory.domain.Reservation.ReleaseCause;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.runtime.error.ClientFacingException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A reservation's life, without a table: what each state answers to a repeated or a later call. */
class ReservationRulesTest {

  private static final Instant T = Instant.parse("2026-12-04T05:00:00Z");
  private static final List<ReservationLine> LINES = List.of(new ReservationLine("P-1", "W-1", 2));

  private static Reservation in(State state, List<ReservationLine> lines) {
    return new Reservation("O-1", state, lines, T, Optional.empty(), T, T);
  }

  private static String reason(Throwable e) {
    return ((ClientFacingException) e).reason();
  }

  @Test
  void answering_aRetryWithTheSameLines_isTheReservationAsItIs_otherLinesOrReleasedAreRefused() {
    Reservation held = in(State.HELD, LINES);
    assertThat(held.answering(in(State.HELD, LINES))).isSameAs(held);
    assertThat(held.isReplayOf(in(State.HELD, LINES))).isTrue();
    assertThatThrownBy(() -> held.answering(in(State.HELD, List.of())))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_MISMATCH"));
    assertThatThrownBy(() -> in(State.RELEASED, LINES).answering(in(State.HELD, LINES)))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_RELEASED"));
    assertThat(in(State.RELEASED, LINES).isReplayOf(in(State.HELD, LINES))).isFalse();
  }

  @Test
  void commit_needsAConfirmedReservation_andIsNothingToDoOnceCommitted() {
    assertThat(in(State.CONFIRMED, LINES).toCommit()).isTrue();
    assertThat(in(State.COMMITTED, LINES).toCommit()).isFalse();
    assertThatThrownBy(() -> in(State.HELD, LINES).toCommit())
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_NOT_CONFIRMED"));
    assertThatThrownBy(() -> in(State.RELEASED, LINES).toCommit())
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_RELEASED"));
  }

  @Test
  void confirmAndRelease_refuseWhatCannotBeUndone() {
    assertThat(in(State.COMMITTED, LINES).confirmed().state()).isEqualTo(State.COMMITTED);
    assertThatThrownBy(() -> in(State.RELEASED, LINES).confirmed())
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_RELEASED"));
    assertThatThrownBy(() -> in(State.COMMITTED, LINES).releasedBy(ReleaseCause.ORDER_CANCELLED, T))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_COMMITTED"));
    assertThat(reason(Reservation.notFound("O-1"))).isEqualTo("RESERVATION_NOT_FOUND");
  }

  @Test
  void aRejectionFencesAHold_butNeverUndoesAConfirm_onlyACancellationFreesAConfirmedReservation() {
    assertThat(in(State.HELD, LINES).releasedBy(ReleaseCause.ORDER_REJECTED, T)).isTrue();
    assertThatThrownBy(() -> in(State.CONFIRMED, LINES).releasedBy(ReleaseCause.ORDER_REJECTED, T))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_CONFIRMED"));
    assertThatThrownBy(() -> in(State.COMMITTED, LINES).releasedBy(ReleaseCause.ORDER_REJECTED, T))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_COMMITTED"));
    assertThat(in(State.CONFIRMED, LINES).releasedBy(ReleaseCause.ORDER_CANCELLED, T)).isTrue();
    assertThat(in(State.HELD, LINES).releasedBy(ReleaseCause.ORDER_CANCELLED, T)).isTrue();
    for (ReleaseCause cause : ReleaseCause.values()) {
      assertThat(in(State.RELEASED, LINES).releasedBy(cause, T)).as("a released one, as it is").isFalse();
    }
  }

  @Test
  void theExpiryReleasesOnlyAHeldHoldPastItsExpiry() {
    assertThat(in(State.HELD, LINES).releasedBy(ReleaseCause.HOLD_EXPIRED, T)).isTrue();
    assertThat(in(State.HELD, LINES).releasedBy(ReleaseCause.HOLD_EXPIRED, T.minusMillis(1))).isFalse();
    assertThat(in(State.CONFIRMED, LINES).releasedBy(ReleaseCause.HOLD_EXPIRED, T.plusSeconds(60))).isFalse();
    assertThat(in(State.COMMITTED, LINES).releasedBy(ReleaseCause.HOLD_EXPIRED, T.plusSeconds(60))).isFalse();
  }
}
