package dev.warehouse.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.contracttools.LatencyBoundRules;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.inventory.v1.ReservationServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.runtime.metrics.MetricsRegistries;
import dev.warehouse.testing.Commands;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * deploy/prometheus/alerts.yml passes {@code promtool check rules} and its unit tests
 * ({@code promtool test rules alerts_test.yml alerts_slo_test.yml alerts_daily_test.yml}); every alert has a test where it fires and one where
 * it stays quiet, and a severity (its runbook: {@link RunbooksTest}); every RPC's latency bound (declared with its route,
 * generated into the rules: contract-tools' LatencyBoundRulesTest) is a bucket the processes' timers publish.
 * (LocalStackIT evaluates the rules on a real Prometheus scraping the real processes.) promtool comes
 * with Debian's prometheus package, which ./test.sh installs.
 */
@Tag("deployment")
class AlertRulesTest {

  private static final Path DIR = Repo.ROOT.resolve("deploy/prometheus");
  /**
   * promtool's unit tests: minute by minute (the budget burns, over hours, apart), and the daily jobs' alerts hour
   * by hour (a file sets its interval). One promtool evaluates its files one after another, on one core.
   */
  private static final List<String> TEST_FILES = List.of("alerts_test.yml", "alerts_slo_test.yml", "alerts_daily_test.yml");
  private static final Pattern LE = Pattern.compile("le=\"([^\"]+)\"");
  private static List<Map<String, Object>> alerts;
  private static List<Map<String, Object>> tests;

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void read() throws IOException {
    alerts = new ArrayList<>();
    Map<String, Object> rules = new Yaml().load(Files.readString(DIR.resolve("alerts.yml")));
    for (Object group : (List<Object>) rules.get("groups")) {
      for (Object rule : (List<Object>) ((Map<String, Object>) group).get("rules")) {
        if (((Map<String, Object>) rule).containsKey("alert")) {
          alerts.add((Map<String, Object>) rule);
        }
      }
    }
    tests = new ArrayList<>();
    for (String file : TEST_FILES) {
      Map<String, Object> unitTests = new Yaml().load(Files.readString(DIR.resolve(file)));
      for (Object test : (List<Object>) unitTests.get("tests")) {
        tests.addAll((List<Map<String, Object>>) ((Map<String, Object>) test).get("alert_rule_test"));
      }
    }
  }

  @Test
  void promtool_checksTheRules_andTheConfigThatLoadsThem() throws Exception {
    assertThat(promtool("check", "rules", "alerts.yml")).contains("SUCCESS");
    assertThat(promtool("check", "config", "prometheus.yml")).contains("SUCCESS: 1 rule files found");
  }

  @Test
  void promtool_unitTestsPass() throws Exception {
    // A promtool per file, all at once: together they are most of this module's time.
    ExecutorService each = Executors.newFixedThreadPool(TEST_FILES.size());
    try {
      List<CompletableFuture<String>> runs = TEST_FILES.stream()
          .map(file -> CompletableFuture.supplyAsync(() -> promtoolUnchecked("test", "rules", file), each)).toList();
      for (int i = 0; i < TEST_FILES.size(); i++) {
        assertThat(runs.get(i).get(2, TimeUnit.MINUTES)).as(TEST_FILES.get(i)).contains("SUCCESS");
      }
    } finally {
      each.shutdownNow();
    }
  }

  @Test
  void everyAlert_isTestedFiringAndQuiet() {
    Set<String> firing = new TreeSet<>();
    Set<String> quiet = new TreeSet<>();
    for (Map<String, Object> test : tests) {
      (((List<?>) test.get("exp_alerts")).isEmpty() ? quiet : firing).add((String) test.get("alertname"));
    }
    Set<String> names = new TreeSet<>(alerts.stream().map(a -> (String) a.get("alert")).toList());
    assertThat(names).hasSizeGreaterThanOrEqualTo(10);
    assertThat(firing).as("alerts tested where they fire").isEqualTo(names);
    assertThat(quiet).as("alerts tested where they stay quiet").isEqualTo(names);
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyAlert_hasASeverity() {
    for (Map<String, Object> alert : alerts) {
      Map<String, String> labels = (Map<String, String>) alert.get("labels");
      assertThat(labels.get("severity")).as("%s's severity", alert.get("alert")).isIn("page", "ticket");
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyLatencyBound_isABucketOfTheProcessesTimers() throws IOException {
    // The processes' registry, with a timer as gRPC's interceptors make one.
    PrometheusMeterRegistry registry = MetricsRegistries.prometheus("gateway");
    Timer.builder("grpc.server.processing.duration").register(registry).record(Duration.ofMillis(5));
    Set<String> published = new HashSet<>();
    Matcher m = LE.matcher(registry.scrape());
    while (m.find()) {
      published.add(m.group(1));
    }
    // The buckets the rules read: each RPC's bound (a recording rule's `le` label, generated from its route),
    // and any `le` an expression names.
    Set<String> used = new TreeSet<>();
    Map<String, Object> rules = new Yaml().load(Files.readString(DIR.resolve("alerts.yml")));
    for (Object group : (List<Object>) rules.get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) ((Map<String, Object>) group).get("rules")) {
        Map<String, String> labels = (Map<String, String>) rule.getOrDefault("labels", Map.of());
        if (labels.containsKey("le")) {
          used.add(labels.get("le"));
        }
        m = LE.matcher((String) rule.get("expr"));
        while (m.find()) {
          used.add(m.group(1));
        }
      }
    }
    assertThat(used).as("the latency bounds of the rules").hasSizeGreaterThanOrEqualTo(2);
    assertThat(published).as("the buckets the timers publish").containsAll(used);
    // And every route's bound as its declaration says it (so a bound that is not a bucket fails here, not silently
    // in a ratio with no numerator).
    LatencyBoundRules.bounds(List.of(
            InventoryServiceProto.getDescriptor().findServiceByName("InventoryService"),
            ReservationServiceProto.getDescriptor().findServiceByName("ReservationService"),
            OrderServiceProto.getDescriptor().findServiceByName("OrderService")))
        .forEach((rpc, seconds) -> assertThat(published).as("%s's bound", rpc).contains(LatencyBoundRules.le(seconds)));
  }

  /** Runs promtool in deploy/prometheus; returns its output, failing on a non-zero exit. */
  private static String promtool(String... args) throws Exception {
    String binary = promtoolBinary();
    assertThat(binary).as(
        "promtool is missing (a missing tool fails, never skips): ./test.sh installs it (Debian's prometheus package), or set PROMTOOL_BIN").isNotNull();
    List<String> command = new ArrayList<>(List.of(binary));
    command.addAll(List.of(args));
    Commands.Run run = Commands.run(DIR, Duration.ofSeconds(60), command);
    assertThat(run.exitValue()).as("promtool %s:%n%s", String.join(" ", args), run.printed()).isZero();
    return run.printed();
  }

  private static String promtoolUnchecked(String... args) {
    try {
      return promtool(args);
    } catch (Exception e) {
      throw new CompletionException(e);
    }
  }

  /** promtool from PROMTOOL_BIN or the PATH; null when there is none (KubernetesManifestsTest uses it too). */
  static String promtoolBinary() {
    return Tools.find("PROMTOOL_BIN", "promtool").orElse(null);
  }
}
