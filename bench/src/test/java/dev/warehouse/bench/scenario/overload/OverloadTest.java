package dev.warehouse.bench.scenario.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.bench.scenario.overload.Overload.Probe;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class OverloadTest {

  private static final long MS = 1_000_000;

  @Test
  void levels_areTheCapacitysMultiples() {
    assertThat(Overload.rates(165, List.of(1, 2, 5, 10))).containsExactly(165.0, 330.0, 825.0, 1650.0);
  }

  @Test
  void levels_needACapacity() {
    assertThatThrownBy(() -> Overload.rates(0, List.of(1))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Overload.rates(Double.NaN, List.of(1))).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void warmUp_endsWhenThreeRoundsInARowAgreeWithinTenPercent() {
    assertThat(Overload.agree(List.of(1200.0))).isFalse();
    assertThat(Overload.agree(List.of(1200.0, 1250.0))).as("two are not enough").isFalse();
    assertThat(Overload.agree(List.of(533.0, 757.0, 800.0))).as("still rising (the stand-in's run)").isFalse();
    assertThat(Overload.agree(List.of(533.0, 1200.0, 1300.0, 1250.0))).isTrue();
    assertThat(Overload.agree(List.of(1300.0, 1200.0, 1250.0))).isTrue();
    assertThat(Overload.agree(List.of(1300.0, 1100.0, 1250.0))).as("apart by more than 10 % of the least").isFalse();
  }

  @Test
  void recovery_isTheFirstAnswerOfTheFirstRunOfGoodProbes() {
    List<Probe> probes = List.of(
        new Probe(0, false, 1 * MS),          // refused
        new Probe(50 * MS, true, 300 * MS),   // OK, but from the queue
        new Probe(100 * MS, true, 5 * MS),
        new Probe(150 * MS, true, 4 * MS),
        new Probe(200 * MS, true, 6 * MS),
        new Probe(250 * MS, true, 5 * MS));

    assertThat(Overload.recovered(probes, 10 * MS, 3)).hasValue(105 * MS);
  }

  @Test
  void recovery_startsOverAfterAnySlowOrFailedProbe() {
    List<Probe> probes = List.of(
        new Probe(0, true, 5 * MS),
        new Probe(50 * MS, false, 1 * MS),
        new Probe(100 * MS, true, 5 * MS),
        new Probe(150 * MS, true, 11 * MS),
        new Probe(200 * MS, true, 5 * MS),
        new Probe(250 * MS, true, 5 * MS),
        new Probe(300 * MS, true, 5 * MS));

    assertThat(Overload.recovered(probes, 10 * MS, 3)).hasValue(205 * MS);
    assertThat(Overload.recovered(probes, 11 * MS, 3)).as("the 11 ms probe is normal now").hasValue(105 * MS);
    assertThat(Overload.recovered(probes, 10 * MS, 4)).isEmpty();
  }

  @Test
  void recovery_ofNoProbes_isNotYet() {
    assertThat(Overload.recovered(List.of(), 10 * MS, 3)).isEmpty();
  }

  @Test
  void outcome_tellsWhoRefused_fromTheErrorInfo() {
    Throwable byGateway = GrpcErrors.toStatusException(new ResourceExhaustedException("OVERLOADED", "busy",
        Map.of("service", "warehouse.order.v1.OrderService", "route", "GetOrder", "retry_after_ms", "100"),
        Duration.ofMillis(100)));
    Throwable byService = GrpcErrors.toStatusException(new ResourceExhaustedException("OVERLOADED", "busy",
        Map.of("route", "GetOrder", "retry_after_ms", "100"), Duration.ofMillis(100)));

    assertThat(Overload.outcome(new CompletionException(byGateway))).isEqualTo(Overload.REFUSED_BY_GATEWAY);
    assertThat(Overload.outcome(byService)).isEqualTo(Overload.REFUSED_BY_SERVICE);
    assertThat(Overload.isRefusal(Overload.outcome(byGateway))).isTrue();
  }

  @Test
  void outcome_ofAnyOtherFailure_isItsCode() {
    assertThat(Overload.outcome(Status.UNAVAILABLE.asRuntimeException())).isEqualTo("UNAVAILABLE");
    // Throttling by the store is RESOURCE_EXHAUSTED too, but no admission refusal.
    assertThat(Overload.outcome(Status.RESOURCE_EXHAUSTED.asRuntimeException())).isEqualTo("RESOURCE_EXHAUSTED");
    assertThat(Overload.isRefusal("RESOURCE_EXHAUSTED")).isFalse();
  }
}
