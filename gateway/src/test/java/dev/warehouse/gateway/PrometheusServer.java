package dev.warehouse.gateway;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.yaml.snakeyaml.Yaml;

/**
 * A real Prometheus (Debian's package) scraping the test stack, to check that the dashboard's
 * queries return data and the alert rules evaluate on real metrics. {@code ./test.sh} installs it;
 * without it the test fails with that hint.
 */
final class PrometheusServer implements AutoCloseable {

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Process process;
  private final int port;
  private final Instant started;

  private PrometheusServer(Process process, int port, Instant started) {
    this.process = process;
    this.port = port;
    this.started = started;
  }

  /** Starts Prometheus scraping {@code targets} (host:port of metrics endpoints) every second. */
  static PrometheusServer start(List<String> targets) throws Exception {
    String binary = System.getenv().getOrDefault("PROMETHEUS_BIN", "prometheus");
    Path dir = StackProcess.ROOT.resolve("gateway/target/e2e-prometheus");
    Files.createDirectories(dir);
    Path config = dir.resolve("prometheus.yml");
    // The alert rules of deploy/prometheus too, so the tests see them evaluated on what the processes export, with
    // the external labels compose's Prometheus gives them (the runbook links' base).
    Files.writeString(config, "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        + "  external_labels:\n" + externalLabels().entrySet().stream()
            .map(l -> "    " + l.getKey() + ": \"" + l.getValue() + "\"\n").collect(Collectors.joining())
        + "rule_files:\n  - \"" + StackProcess.ROOT.resolve("deploy/prometheus/alerts.yml").toAbsolutePath() + "\"\n"
        + "scrape_configs:\n"
        + "  - job_name: stack\n    static_configs:\n      - targets: ["
        + targets.stream().map(t -> "\"" + t + "\"").collect(Collectors.joining(", ")) + "]\n");
    // A fresh store each run: series an earlier run left (same labels, the revision "unknown" both times) would
    // answer the queries in its place, and hide a new build from the deploy annotation's "offset 5m".
    Path data = dir.resolve("data");
    if (Files.exists(data)) {
      try (java.util.stream.Stream<Path> paths = Files.walk(data)) {
        for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.delete(path);
        }
      }
    }
    int port = StackProcess.freePort();
    Instant started = Instant.now();
    Process process;
    try {
      process = new ProcessBuilder(binary, "--config.file=" + config, "--storage.tsdb.path=" + data,
          "--web.listen-address=127.0.0.1:" + port, "--log.level=warn")
          .redirectErrorStream(true)
          .redirectOutput(dir.resolve("prometheus.log").toFile())
          .start();
    } catch (IOException e) {
      throw new IllegalStateException("Prometheus is not installed: run ./test.sh, or apt-get install prometheus", e);
    }
    PrometheusServer server = new PrometheusServer(process, port, started);
    Awaitility.await("Prometheus ready; else see " + dir.resolve("prometheus.log")).atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200)).failFast("Prometheus exited; see " + dir.resolve("prometheus.log"),
            () -> !process.isAlive())
        .until(server::ready);
    return server;
  }

  private boolean ready() {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/-/ready")).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException | InterruptedException notYet) {
      return false;
    }
  }

  /** The raw JSON answer of an instant query. */
  String query(String expr) throws IOException, InterruptedException {
    URI uri = URI.create("http://127.0.0.1:" + port + "/api/v1/query?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8));
    return HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  /** The raw JSON answer of a range query from {@code start} to {@code end}, one point every {@code step}. */
  String queryRange(String expr, Instant start, Instant end, Duration step) throws IOException, InterruptedException {
    URI uri = URI.create("http://127.0.0.1:" + port + "/api/v1/query_range?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8)
        + "&start=" + start.getEpochSecond() + "&end=" + end.getEpochSecond() + "&step=" + step.toSeconds());
    return HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  /** When this server was started: before its first scrape. */
  Instant started() {
    return started;
  }

  /** The external labels of deploy/prometheus/prometheus.yml. */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> externalLabels() throws IOException {
    Map<String, Object> config = new Yaml().load(Files.readString(StackProcess.ROOT.resolve("deploy/prometheus/prometheus.yml")));
    return (Map<String, Object>) ((Map<String, Object>) config.get("global")).getOrDefault("external_labels", Map.of());
  }

  /** The raw JSON answer of the rules endpoint: every loaded rule with its health and last error. */
  String rules() throws IOException, InterruptedException {
    URI uri = URI.create("http://127.0.0.1:" + port + "/api/v1/rules");
    return HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
