package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GatewayConfigTest {

  /** The settings under test, without authentication (AuthConfigTest has its own). */
  private static Map<String, String> env(String... pairs) {
    Map<String, String> env = new java.util.HashMap<>(Map.of("AUTH_MODE", "none"));
    for (int i = 0; i < pairs.length; i += 2) {
      env.put(pairs[i], pairs[i + 1]);
    }
    return env;
  }

  @Test
  void minForwardBudget_defaultsTo50ms_andIsLogged() {
    GatewayConfig config = GatewayConfig.fromEnvironment(env());

    assertThat(config.minForwardBudget()).isEqualTo(Duration.ofMillis(50)).isEqualTo(GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET);
    assertThat(config.describe()).contains(" min_forward_budget_ms=50 ");
    assertThat(GatewayConfig.variables()).contains("MIN_FORWARD_BUDGET_MS");
  }

  @Test
  void minForwardBudget_isSettable() {
    assertThat(GatewayConfig.fromEnvironment(env("MIN_FORWARD_BUDGET_MS", "20")).minForwardBudget())
        .isEqualTo(Duration.ofMillis(20));
  }

  @Test
  void minForwardBudget_mustBePositive() {
    for (String value : new String[] {"0", "-5", "fifty"}) {
      assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("MIN_FORWARD_BUDGET_MS", value)))
          .as(value).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MIN_FORWARD_BUDGET_MS");
    }
  }

  @Test
  void minForwardBudget_mustBeBelowTheDefaultDeadline_andIsReportedWithTheOtherProblems() {
    assertThatThrownBy(() -> GatewayConfig.fromEnvironment(env("MIN_FORWARD_BUDGET_MS", "500", "DEFAULT_DEADLINE_MS", "500",
        "GRPC_PORT", "70000")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("MIN_FORWARD_BUDGET_MS (500) must be less than DEFAULT_DEADLINE_MS (500)")
        .hasMessageContaining("GRPC_PORT");
    assertThat(GatewayConfig.fromEnvironment(env("MIN_FORWARD_BUDGET_MS", "499", "DEFAULT_DEADLINE_MS", "500"))
        .minForwardBudget()).isEqualTo(Duration.ofMillis(499));
  }
}
