package dev.warehouse.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("integration")
class FloodTest {

  @Test
  void countsEveryOutcome_andNeverSendsPastTheSchedule() throws Exception {
    // Every third call refused, the others answered at once.
    Call call = i -> i % 3 == 0
        ? CompletableFuture.failedFuture(Status.RESOURCE_EXHAUSTED.asRuntimeException())
        : CompletableFuture.completedFuture("ok");

    Flood flood = Flood.start("test", call, 1_000, Duration.ofMillis(300), Outcome::of);
    flood.awaitSchedule();
    assertThat(flood.awaitAnswers(Duration.ofSeconds(10))).isTrue();
    Flood.Result result = flood.result();

    assertThat(result.due()).isEqualTo(300);
    assertThat(result.sent()).isPositive().isLessThanOrEqualTo(result.due());
    assertThat(result.unanswered()).isZero();
    // How many were sent depends on the machine (a stall past the schedule's end stops it); what came back
    // of them does not.
    long refused = (result.sent() + 2) / 3;
    assertThat(result.counts().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(result.sent());
    assertThat(result.counts().get("RESOURCE_EXHAUSTED")).isEqualTo(refused);
    assertThat(result.count("OK"::equals)).isEqualTo(result.sent() - refused);
    assertThat(result.offeredPerSecond()).isEqualTo(result.sent() / 0.3);
    assertThat(result.summary("refused", "RESOURCE_EXHAUSTED"::equals, true).count()).isEqualTo(refused);
    assertThat(result.summary("answered", outcome -> true, false).count()).isEqualTo(result.sent());
  }
}
