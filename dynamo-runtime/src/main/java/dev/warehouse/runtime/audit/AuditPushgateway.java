package dev.warehouse.runtime.audit;

import dev.warehouse.runtime.log.Events;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the outcome of one audit run to a Prometheus Pushgateway, through its plain HTTP API, so
 * that alerts can see a command-line run that no scrape would catch. The group is
 * {@code /metrics/job/warehouse_audit/audit/<audit>}; the Pushgateway adds {@code job} and
 * {@code audit} to every metric, so the body carries no labels (and no IDs).
 *
 * <p>A run that reached a verdict (clean or problems found) replaces its whole group (PUT). A run that
 * could not finish has no verdict, so it replaces only the metrics it knows (POST): the findings and
 * {@code warehouse_audit_last_success_timestamp_seconds} of the last finished run stay, and an open
 * "problems found" alert is not resolved by a run that never got to look.
 *
 * <p>A failed push is logged and changes nothing else: the audit's exit status is its verdict on the
 * table, not on the monitoring.
 */
public final class AuditPushgateway {

  /** The {@code job} label of every audit's metrics. */
  public static final String JOB = "warehouse_audit";
  /** How long one push may take, connection included: a stuck Pushgateway must not hold a finished audit. */
  static final Duration TIMEOUT = Duration.ofSeconds(10);

  private static final Logger log = LoggerFactory.getLogger(AuditPushgateway.class);

  /**
   * What one run of an audit came to.
   *
   * @param audit      the audit's name, the {@code audit} label, e.g. {@code orders}
   * @param exitStatus its exit status ({@link AuditCommand#EXIT_CLEAN} and so on)
   * @param findings   the problems it found; empty when it could not finish
   * @param byKind     the problems it found by their kind ({@code STOCK_INVARIANT}, ...), each with some
   * @param started    when it started
   * @param finished   when it ended
   */
  public record Outcome(String audit, int exitStatus, OptionalInt findings, java.util.Map<String, Integer> byKind,
      Instant started, Instant finished) {

    public Outcome {
      byKind = new java.util.TreeMap<>(byKind);
    }

    /** Whether the run reached a verdict, clean or not. */
    boolean finishedItsWalk() {
      return findings.isPresent();
    }
  }

  private final URI base;
  private final HttpClient http;

  /** @param base the Pushgateway, e.g. {@code http://pushgateway:9091} ({@code AUDIT_PUSHGATEWAY_URL}) */
  public AuditPushgateway(URI base) {
    this.base = base;
    this.http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  }

  /** The URL of an audit's group. */
  URI groupUri(String audit) {
    String root = base.toString().replaceAll("/+$", "");
    return URI.create(root + "/metrics/job/" + JOB + "/audit/" + audit);
  }

  /**
   * Pushes {@code outcome}; logs and returns false when the Pushgateway is unreachable, slow or refuses
   * it. Never throws.
   */
  public boolean push(Outcome outcome) {
    URI uri = groupUri(outcome.audit());
    HttpRequest.BodyPublisher body = HttpRequest.BodyPublishers.ofString(body(outcome), StandardCharsets.UTF_8);
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(TIMEOUT)
        .header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        .method(outcome.finishedItsWalk() ? "PUT" : "POST", body)
        .build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() / 100 != 2) {
        Events.warn(log, "audit_push_failed").addKeyValue("audit", outcome.audit()).addKeyValue("url", uri.toString())
            .addKeyValue("http_status", response.statusCode()).addKeyValue("body", oneLine(response.body())).log();
        return false;
      }
      Events.info(log, "audit_pushed").addKeyValue("audit", outcome.audit()).addKeyValue("url", uri.toString())
          .addKeyValue("exit_status", outcome.exitStatus()).log();
      return true;
    } catch (IOException e) {
      Events.warn(log, "audit_push_failed").addKeyValue("audit", outcome.audit()).addKeyValue("url", uri.toString())
          .addKeyValue("reason", oneLine(e.getClass().getSimpleName() + ": " + e.getMessage())).log();
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      Events.warn(log, "audit_push_failed").addKeyValue("audit", outcome.audit()).addKeyValue("url", uri.toString())
          .addKeyValue("reason", "interrupted").log();
      return false;
    }
  }

  /** The text exposition format of {@code outcome}'s metrics. */
  static String body(Outcome outcome) {
    StringBuilder text = new StringBuilder();
    gauge(text, "warehouse_audit_last_run_timestamp_seconds", "When the audit last ended, whatever its outcome.",
        seconds(outcome.finished()));
    gauge(text, "warehouse_audit_exit_status",
        "Exit status of the audit's last run: 0 clean, 1 problems found, 3 could not finish.",
        Integer.toString(outcome.exitStatus()));
    gauge(text, "warehouse_audit_duration_seconds", "How long the audit's last run took.",
        seconds(Duration.between(outcome.started(), outcome.finished())));
    if (outcome.finishedItsWalk()) {
      gauge(text, "warehouse_audit_findings", "Problems the last finished run of the audit found.",
          Integer.toString(outcome.findings().getAsInt()));
      // By kind too, so a broken stock promise pages while a stray marker raises a ticket. A kind the run
      // did not find is absent (the group is replaced whole by each finished run).
      text.append("# HELP warehouse_audit_findings_by_kind Problems the last finished run of the audit found, by kind.\n")
          .append("# TYPE warehouse_audit_findings_by_kind gauge\n");
      outcome.byKind().forEach((kind, count) -> text.append("warehouse_audit_findings_by_kind{kind=\"").append(kind)
          .append("\"} ").append(count).append('\n'));
      gauge(text, "warehouse_audit_last_success_timestamp_seconds",
          "When a run of the audit last finished its walk of the table (clean or with findings).",
          seconds(outcome.finished()));
    }
    return text.toString();
  }

  private static void gauge(StringBuilder text, String name, String help, String value) {
    text.append("# HELP ").append(name).append(' ').append(help).append('\n')
        .append("# TYPE ").append(name).append(" gauge\n")
        .append(name).append(' ').append(value).append('\n');
  }

  private static String seconds(Instant instant) {
    return BigDecimal.valueOf(instant.toEpochMilli()).movePointLeft(3).toPlainString();
  }

  private static String seconds(Duration duration) {
    return BigDecimal.valueOf(duration.toMillis()).movePointLeft(3).toPlainString();
  }

  private static String oneLine(String text) {
    String line = text == null ? "" : text.replaceAll("\\s+", " ").trim();
    return line.length() > 200 ? line.substring(0, 200) : line;
  }
}
