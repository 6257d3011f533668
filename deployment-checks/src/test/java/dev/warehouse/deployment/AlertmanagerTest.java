package dev.warehouse.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpServer;
import dev.warehouse.testing.Commands;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * deploy/alertmanager/alertmanager.yml: amtool accepts it and routes pages and tickets to their receivers;
 * and a real Alertmanager (Debian's prometheus-alertmanager, which ./test.sh installs) given the firing
 * alerts of an inventory-service outage (its absence, the gateway's circuit to it, the SLO burns of every
 * RPC it fails, the scrape tickets) sends one page, the cause, with every symptom inhibited. The running
 * copy differs from the file only in its receivers (webhooks to this test) and its waits (a second).
 */
@Tag("deployment")
class AlertmanagerTest {

  private static final Path DIR = Repo.ROOT.resolve("deploy/alertmanager");
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void amtool_acceptsTheConfig_andRoutesBySeverity() throws Exception {
    assertThat(amtool("check-config", "alertmanager.yml")).contains("SUCCESS");
    assertThat(amtool("config", "routes", "test", "--config.file=alertmanager.yml", "severity=page",
        "alertname=BackendAbsent", "backend=inventory-service").strip()).isEqualTo("page");
    assertThat(amtool("config", "routes", "test", "--config.file=alertmanager.yml", "severity=ticket",
        "alertname=MetricsTargetDown").strip()).isEqualTo("ticket");
    assertThat(amtool("config", "routes", "test", "--config.file=alertmanager.yml", "alertname=Unlabelled").strip())
        .as("an alert without a severity is not lost: it becomes a ticket").isEqualTo("ticket");
  }

  @Test
  @SuppressWarnings("unchecked")
  void aBackendOutage_pagesOnce_withItsCause(@TempDir Path dir) throws Exception {
    ConcurrentLinkedQueue<JsonObject> pages = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<JsonObject> tickets = new ConcurrentLinkedQueue<>();
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.createContext("/", exchange -> {
      JsonObject body = JsonParser.parseString(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8))
          .getAsJsonObject();
      (exchange.getRequestURI().getPath().equals("/page") ? pages : tickets).add(body);
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    receiver.start();
    String hook = "http://127.0.0.1:" + receiver.getAddress().getPort();

    // The file's routes and inhibitions, with this test's receivers and waits of a second.
    Map<String, Object> config = new Yaml().load(Files.readString(DIR.resolve("alertmanager.yml")));
    Map<String, Object> route = (Map<String, Object>) config.get("route");
    route.put("group_wait", "1s");
    route.put("group_interval", "1s");
    config.put("receivers", List.of(
        Map.of("name", "page", "webhook_configs", List.of(Map.of("url", hook + "/page"))),
        Map.of("name", "ticket", "webhook_configs", List.of(Map.of("url", hook + "/ticket")))));
    Path file = dir.resolve("alertmanager.yml");
    Files.writeString(file, new Yaml().dump(config));

    int port = Tools.freePort();
    Process alertmanager = new ProcessBuilder(binary("ALERTMANAGER_BIN", "prometheus-alertmanager", "alertmanager"),
        "--config.file=" + file, "--storage.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
        "--cluster.listen-address=")
        .redirectErrorStream(true).redirectOutput(dir.resolve("alertmanager.log").toFile()).start();
    try {
      String api = "http://127.0.0.1:" + port + "/api/v2";
      Awaitility.await("Alertmanager ready").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
          .ignoreExceptions().until(() -> get(api + "/status").statusCode() == 200);

      List<Map<String, String>> outage = new ArrayList<>();
      outage.add(alert("BackendAbsent", "severity", "page", "backend", "inventory-service"));
      outage.add(alert("GatewayCircuitOpen", "severity", "page", "application", "gateway", "name", "inventory-service",
          "backend", "inventory-service"));
      for (String method : List.of("GetProductInventory", "AdjustStock", "ListWarehouseProducts", "ReserveStock")) {
        outage.add(alert("RpcAvailabilityBudgetBurnFast", "severity", "page", "slo", "availability",
            "service", "warehouse.inventory.v1.InventoryService", "method", method));
        outage.add(alert("RpcLatencyBudgetBurnFast", "severity", "page", "slo", "latency",
            "service", "warehouse.inventory.v1.InventoryService", "method", method));
      }
      // The order-service's placements fail with it: symptoms of the same cause, under another service.
      outage.add(alert("RpcAvailabilityBudgetBurnFast", "severity", "page", "slo", "availability",
          "service", "warehouse.order.v1.OrderService", "method", "PlaceOrder"));
      outage.add(alert("MetricsTargetDown", "severity", "ticket", "job", "inventory-service", "instance", "10.0.0.6:9092"));
      outage.add(alert("MetricsTargetDown", "severity", "ticket", "job", "inventory-service", "instance", "10.0.0.8:9092"));
      JsonArray posted = new JsonArray();
      String now = Instant.now().toString();
      for (Map<String, String> labels : outage) {
        JsonObject one = new JsonObject();
        JsonObject l = new JsonObject();
        labels.forEach(l::addProperty);
        one.add("labels", l);
        one.addProperty("startsAt", now);
        posted.add(one);
      }
      HttpResponse<String> post = HTTP.send(HttpRequest.newBuilder(URI.create(api + "/alerts"))
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(posted.toString())).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(post.statusCode()).as(post.body()).isEqualTo(200);

      // Both groups are flushed a second after the alerts arrive: the tickets' notification is the sign.
      Awaitility.await("a page and the tickets notified").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
          .until(() -> !pages.isEmpty() && !tickets.isEmpty());
      assertThat(pages).as("page notifications").hasSize(1);
      assertThat(names(pages.peek())).containsExactly("BackendAbsent");
      assertThat(names(tickets.peek())).containsOnly("MetricsTargetDown").hasSize(2);

      // Every symptom is held back by the cause, as Alertmanager's own view says.
      JsonArray active = JsonParser.parseString(get(api + "/alerts").body()).getAsJsonArray();
      assertThat(active).hasSize(outage.size());
      for (JsonElement a : active) {
        JsonObject alert = a.getAsJsonObject();
        String name = alert.getAsJsonObject("labels").get("alertname").getAsString();
        String state = alert.getAsJsonObject("status").get("state").getAsString();
        if (name.equals("BackendAbsent") || name.equals("MetricsTargetDown")) {
          assertThat(state).as(name).isEqualTo("active");
        } else {
          assertThat(state).as(name + " " + alert.getAsJsonObject("labels")).isEqualTo("suppressed");
        }
      }
    } finally {
      alertmanager.destroy();
      alertmanager.waitFor(10, TimeUnit.SECONDS);
      receiver.stop(0);
    }
  }

  private static Map<String, String> alert(String name, String... labels) {
    Map<String, String> all = new LinkedHashMap<>();
    all.put("alertname", name);
    for (int i = 0; i < labels.length; i += 2) {
      all.put(labels[i], labels[i + 1]);
    }
    return all;
  }

  /** The alert names of one webhook notification. */
  private static List<String> names(JsonObject notification) {
    List<String> names = new ArrayList<>();
    notification.getAsJsonArray("alerts").forEach(a -> names.add(
        a.getAsJsonObject().getAsJsonObject("labels").get("alertname").getAsString()));
    return names;
  }

  private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Runs amtool in deploy/alertmanager; returns its output, failing on a non-zero exit. */
  private static String amtool(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(binary("AMTOOL_BIN", "amtool")));
    command.addAll(List.of(args));
    Commands.Run run = Commands.run(DIR, Duration.ofSeconds(60), command);
    assertThat(run.exitValue()).as("amtool %s:%n%s", String.join(" ", args), run.printed()).isZero();
    return run.output();
  }

  /** The tool from {@code variable} or the PATH (a missing tool fails, never skips: ./test.sh installs it). */
  private static String binary(String variable, String... names) {
    return Tools.require(variable, "prometheus-alertmanager", names);
  }
}
