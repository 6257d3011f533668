package dev.warehouse.order;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.tls.TlsConfig;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Settings that would break the saga's invariants stop start-up, each naming its variables. */
class OrderSettingsTest {

  private static OrderSettings read(Map<String, String> env) {
    return OrderSettings.fromEnvironment(env, TlsConfig.PLAINTEXT);
  }

  @Test
  void theDefaults_holdLongerThanTheGrace_andAskForIt() {
    OrderSettings settings = read(Map.of());
    assertThat(settings.hold()).isGreaterThan(settings.stepGrace());
    assertThat(settings.timings().hold()).isEqualTo(Duration.ofSeconds(60));
    assertThat(settings.timings().stepBudget()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void aRecoveryTurnedOff_isRefused() {
    assertThatThrownBy(() -> read(Map.of("ORDER_RECOVERY_SECONDS", "0")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ORDER_RECOVERY_SECONDS");
  }

  @Test
  void aHoldNotLongerThanTheGrace_orPastTheContractsLimit_isRefused() {
    assertThatThrownBy(() -> read(Map.of("ORDER_STEP_GRACE_SECONDS", "60", "ORDER_HOLD_SECONDS", "60")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ORDER_HOLD_SECONDS").hasMessageContaining("longer than the step grace");
    assertThatThrownBy(() -> read(Map.of("ORDER_HOLD_SECONDS", "901")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 15 minutes");
    assertThat(read(Map.of("ORDER_STEP_GRACE_SECONDS", "30", "ORDER_HOLD_SECONDS", "31")).hold())
        .isEqualTo(Duration.ofSeconds(31));
  }
}
