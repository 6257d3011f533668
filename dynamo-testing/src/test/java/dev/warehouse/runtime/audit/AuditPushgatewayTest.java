package dev.warehouse.runtime.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.testing.LogRecords;
import dev.warehouse.testing.PushgatewayStub;
import dev.warehouse.testing.TestClock;
import dev.warehouse.runtime.testing.TestServices;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The command line pushes each run's outcome to the configured Pushgateway, timed by the clock it is
 * given; a push that fails is logged and leaves the exit status alone. (The services' audit tests push
 * from real audits over moto.)
 */
@Tag("integration")
class AuditPushgatewayTest {

  private static final Instant START = Instant.parse("2026-12-03T02:00:00Z");

  private final TestClock clock = new TestClock(START);

  /** Runs the command line over an audit that takes 42.5 s by the clock and reports {@code report}. */
  private int run(StoreServiceConfig config, AuditReport report) {
    return run(config, scan -> {
      clock.advance(Duration.ofMillis(42_500));
      return report;
    });
  }

  private int run(StoreServiceConfig config, AuditCommand.Audit audit) {
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    return AuditCommand.run(config, new String[0], out, "test-audit", "orders", audit, clock);
  }

  private static StoreServiceConfig config(URI pushgateway) {
    return TestServices.config("audit", TestServices.uniqueTableName()).withAuditPushgateway(pushgateway);
  }

  @Test
  void cleanRun_replacesItsGroup_withEveryMetric() {
    try (PushgatewayStub pushgateway = PushgatewayStub.start()) {
      int status = run(config(pushgateway.uri()), new AuditReport(Map.of("orders", 7L), List.of()));

      assertThat(status).isEqualTo(AuditCommand.EXIT_CLEAN);
      assertThat(pushgateway.pushes()).singleElement().satisfies(push -> {
        assertThat(push.method()).isEqualTo("PUT");
        assertThat(push.path()).isEqualTo("/metrics/job/warehouse_audit/audit/orders");
        assertThat(push.contentType()).startsWith("text/plain; version=0.0.4");
        assertThat(push.body()).contains("# TYPE warehouse_audit_findings gauge\n").endsWith("\n");
        assertThat(push.samples()).containsExactly(
            entry("warehouse_audit_last_run_timestamp_seconds", 1796263242.5),
            entry("warehouse_audit_exit_status", 0.0),
            entry("warehouse_audit_duration_seconds", 42.5),
            entry("warehouse_audit_findings", 0.0),
            entry("warehouse_audit_last_success_timestamp_seconds", 1796263242.5));
      });
    }
  }

  @Test
  void runWithFindings_pushesTheirCount_andEachKindsCount_andExitsOne() {
    List<Finding> findings = List.of(new Finding("MISSING_DIRECT_COPY", "order_id=O1", ""),
        new Finding("COPIES_DISAGREE", "order_id=O2", "attributes=status"),
        new Finding("COPIES_DISAGREE", "order_id=O3", "attributes=version"));
    try (PushgatewayStub pushgateway = PushgatewayStub.start()) {
      int status = run(config(pushgateway.uri()), new AuditReport(Map.of("orders", 7L), findings));

      assertThat(status).isEqualTo(AuditCommand.EXIT_PROBLEMS);
      assertThat(pushgateway.pushes()).singleElement().satisfies(push -> {
        assertThat(push.method()).isEqualTo("PUT");
        assertThat(push.samples()).containsEntry("warehouse_audit_exit_status", 1.0)
            .containsEntry("warehouse_audit_findings", 3.0)
            .containsEntry("warehouse_audit_findings_by_kind{kind=\"COPIES_DISAGREE\"}", 2.0)
            .containsEntry("warehouse_audit_findings_by_kind{kind=\"MISSING_DIRECT_COPY\"}", 1.0);
        // No ID reaches the metrics: findings are counted, not listed; the kind is a bounded label.
        assertThat(push.body()).doesNotContain("O1", "O2", "O3", "order_id");
      });
    }
  }

  /** No verdict: only what it knows, by POST, so the last finished run's findings stay in the group. */
  @Test
  void unfinishedRun_postsItsStatus_withoutFindings() {
    try (PushgatewayStub pushgateway = PushgatewayStub.start()) {
      int status = run(config(pushgateway.uri()), scan -> {
        clock.advance(Duration.ofSeconds(3));
        throw new CompletionException(new IllegalStateException("gone"));
      });

      assertThat(status).isEqualTo(AuditCommand.EXIT_UNFINISHED);
      assertThat(pushgateway.pushes()).singleElement().satisfies(push -> {
        assertThat(push.method()).isEqualTo("POST");
        assertThat(push.path()).isEqualTo("/metrics/job/warehouse_audit/audit/orders");
        assertThat(push.samples()).containsExactly(
            entry("warehouse_audit_last_run_timestamp_seconds", 1796263203.0),
            entry("warehouse_audit_exit_status", 3.0),
            entry("warehouse_audit_duration_seconds", 3.0));
      });
    }
  }

  @Test
  void badArguments_pushNothing() {
    try (PushgatewayStub pushgateway = PushgatewayStub.start()) {
      PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
      int status = AuditCommand.run(config(pushgateway.uri()), new String[] {"--segments", "0"}, out, "test-audit",
          "orders", scan -> new AuditReport(Map.of(), List.of()), clock);

      assertThat(status).isEqualTo(AuditCommand.EXIT_BAD_ARGUMENTS);
      assertThat(pushgateway.pushes()).isEmpty();
    }
  }

  @Test
  void pushgatewayDown_isLogged_andKeepsTheExitStatus() {
    URI down = PushgatewayStub.nobody();
    try (LogRecords logs = new LogRecords(AuditPushgateway.class)) {
      List<Finding> findings = List.of(new Finding("MISSING_DIRECT_COPY", "order_id=O1", ""));
      assertThat(run(config(down), new AuditReport(Map.of(), findings))).isEqualTo(AuditCommand.EXIT_PROBLEMS);
      assertThat(logs.events()).hasSize(1);
      assertThat(logs.events().get(0).fields()).containsEntry("event", "audit_push_failed").containsEntry("audit", "orders")
          .containsEntry("url", down + "/metrics/job/warehouse_audit/audit/orders");
      assertThat(logs.events().get(0).field("reason")).asString().startsWith("ConnectException");
    }
  }

  @Test
  void pushgatewayRefusing_isLogged_andKeepsTheExitStatus() {
    try (PushgatewayStub pushgateway = PushgatewayStub.start(400); LogRecords logs = new LogRecords(AuditPushgateway.class)) {
      assertThat(run(config(pushgateway.uri()), new AuditReport(Map.of(), List.of()))).isEqualTo(AuditCommand.EXIT_CLEAN);
      assertThat(pushgateway.pushes()).hasSize(1);
      assertThat(logs.events()).hasSize(1);
      assertThat(logs.events().get(0).fields()).containsEntry("event", "audit_push_failed")
          .containsEntry("http_status", 400);
    }
  }

  @Test
  void groupUri_ignoresATrailingSlash() {
    assertThat(new AuditPushgateway(URI.create("http://pushgateway:9091/")).groupUri("low_stock"))
        .isEqualTo(URI.create("http://pushgateway:9091/metrics/job/warehouse_audit/audit/low_stock"));
  }
}
