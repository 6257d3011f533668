package dev.warehouse.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.testing.PushgatewayStub;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

/**
 * Runs a consistency audit's command line as {@code main} does, and checks what every audit's command
 * promises ({@code dev.warehouse.runtime.audit.AuditCommand}): exit 2 with the usage for bad arguments,
 * exit 3 with one line saying why when DynamoDB fails under it, is unreachable or does not answer.
 */
public final class AuditChecks {

  /** What one run returned and printed. */
  public record Run(int status, String output) {
    public List<String> lines() {
      return output.lines().toList();
    }
  }

  private AuditChecks() {}

  public static Run run(AuditCommand.Line audit, StoreServiceConfig config, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status = audit.run(config, args, new PrintStream(out, true, StandardCharsets.UTF_8));
    return new Run(status, out.toString(StandardCharsets.UTF_8));
  }

  /**
   * Runs the audit with {@code AUDIT_PUSHGATEWAY_URL} pointing at a Pushgateway on loopback, and checks
   * the one push of the run: a PUT to the group of {@code metric}, whose exit status and findings are
   * what the run returned and printed, stamped within the run.
   */
  public static Run runPushing(AuditCommand.Line audit, StoreServiceConfig config, String metric, String... args) {
    try (PushgatewayStub pushgateway = PushgatewayStub.start()) {
      Instant before = Instant.now().truncatedTo(ChronoUnit.MILLIS);
      Run run = run(audit, config.withAuditPushgateway(pushgateway.uri()), args);
      Instant after = Instant.now();
      assertThat(pushgateway.pushes()).as(run.output()).singleElement().satisfies(push -> {
        assertThat(push.method()).isEqualTo("PUT");
        assertThat(push.path()).isEqualTo("/metrics/job/warehouse_audit/audit/" + metric);
        Map<String, Double> samples = push.samples();
        // The findings by kind, as the run printed them (each line but the summary starts with its kind).
        Map<String, Double> byKind = new java.util.TreeMap<>();
        run.lines().subList(0, run.lines().size() - 1).forEach(line ->
            byKind.merge("warehouse_audit_findings_by_kind{kind=\"" + line.split(" ")[0] + "\"}", 1.0, Double::sum));
        java.util.List<String> keys = new java.util.ArrayList<>(java.util.List.of("warehouse_audit_last_run_timestamp_seconds",
            "warehouse_audit_exit_status", "warehouse_audit_duration_seconds", "warehouse_audit_findings",
            "warehouse_audit_last_success_timestamp_seconds"));
        keys.addAll(byKind.keySet());
        assertThat(samples).containsOnlyKeys(keys);
        byKind.forEach((key, count) -> assertThat(samples.get(key)).as(key).isEqualTo(count));
        assertThat(samples.get("warehouse_audit_exit_status")).isEqualTo(run.status());
        // Every line but the summary is a finding.
        assertThat(samples.get("warehouse_audit_findings")).isEqualTo(run.lines().size() - 1);
        double lastRun = samples.get("warehouse_audit_last_run_timestamp_seconds");
        assertThat(lastRun).isBetween(before.toEpochMilli() / 1000.0, after.toEpochMilli() / 1000.0);
        assertThat(samples.get("warehouse_audit_last_success_timestamp_seconds")).isEqualTo(lastRun);
        assertThat(samples.get("warehouse_audit_duration_seconds"))
            .isBetween(0.0, Duration.between(before, after).toMillis() / 1000.0);
      });
      return run;
    }
  }

  /** With its Pushgateway down, the audit returns and prints what it does without one; the push is only logged. */
  public static void assertPushgatewayDown_keepsTheExitStatus(AuditCommand.Line audit, StoreServiceConfig config, String... args) {
    Run without = run(audit, config, args);
    Run down = run(audit, config.withAuditPushgateway(PushgatewayStub.nobody()), args);
    assertThat(down.status()).as(down.output()).isEqualTo(without.status());
    assertThat(down.output()).isEqualTo(without.output());
  }

  /** A config that runs the audit over {@code table} at {@code endpoint}. */
  public static StoreServiceConfig config(String table, URI endpoint, Duration callTimeout) {
    return TestServices.config("audit", table, endpoint, callTimeout);
  }

  /** Each malformed argument list: exit 2, and the usage with its exit statuses. */
  public static void assertExitsTwoWithTheUsage_onBadArguments(AuditCommand.Line audit, String table) {
    for (String[] args : List.of(new String[] {"--segments", "0"}, new String[] {"--segments"},
        new String[] {"--pages-per-second", "many"}, new String[] {"--verbose"})) {
      Run run = run(audit, TestServices.config("audit", table), args);
      assertThat(run.status()).as(String.join(" ", args)).isEqualTo(2);
      assertThat(run.output())
          .contains("usage: audit [--segments N] [--pages-per-second N]")
          .contains("3 could not finish");
    }
  }

  /** Every Scan answered with HTTP 500: exit 3, one line naming the error. */
  public static void assertExitsThree_whenDynamoDbFailsUnderIt(AuditCommand.Line audit, String table) {
    try (DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint())) {
      proxy.inject("Scan", DynamoFaultProxy.Fault.HTTP_500, Integer.MAX_VALUE);
      Run run = run(audit, config(table, proxy.endpoint(), Duration.ofSeconds(5)), "--segments", "2");

      assertThat(run.status()).isEqualTo(3);
      assertThat(proxy.injected()).isPositive();
      assertThat(run.lines()).singleElement().asString()
          .startsWith("audit table=" + table + " could not finish: ")
          .contains("HTTP 500", "InternalServerError");
    }
  }

  /** Every Scan answered after the call timeout: exit 3, one line naming the timeout. */
  public static void assertExitsThree_whenDynamoDbTimesOut(AuditCommand.Line audit, String table) {
    try (DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint())) {
      proxy.delay("Scan", Duration.ofSeconds(5), Integer.MAX_VALUE);
      Run run = run(audit, config(table, proxy.endpoint(), Duration.ofSeconds(1)));

      assertThat(run.status()).isEqualTo(3);
      assertThat(run.lines()).singleElement().asString()
          .isEqualTo("audit table=" + table + " could not finish: DynamoDB did not answer within "
              + "DYNAMODB_CALL_TIMEOUT_MS=1000");
    }
  }

  /** Nothing listening at the endpoint: exit 3, one line naming the endpoint. */
  public static void assertExitsThree_whenDynamoDbIsUnreachable(AuditCommand.Line audit, String table) throws Exception {
    URI nobody;
    try (ServerSocket closedSoon = new ServerSocket(0)) {
      nobody = URI.create("http://127.0.0.1:" + closedSoon.getLocalPort());
    }
    Run run = run(audit, config(table, nobody, Duration.ofSeconds(5)));

    assertThat(run.status()).isEqualTo(3);
    assertThat(run.lines()).singleElement().asString()
        .startsWith("audit table=" + table + " could not finish: ")
        .contains("could not reach DynamoDB at " + nobody);
  }
}
