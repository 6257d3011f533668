package dev.warehouse.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * deploy/blackbox/blackbox.yml, run by the real blackbox exporter (Debian's prometheus-blackbox-exporter,
 * which ./test.sh installs): its compose module reports a gRPC health server SERVING as success and
 * NOT_SERVING as failure, and every module the Prometheus configurations' probe jobs name is in the file.
 */
@Tag("deployment")
class BlackboxProbeTest {

  private static final Path CONFIG = Repo.ROOT.resolve("deploy/blackbox/blackbox.yml");
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  @SuppressWarnings("unchecked")
  void theProbeJobs_nameModulesTheFileHas() throws IOException {
    Map<String, Object> modules = (Map<String, Object>) new Yaml().<Map<String, Object>>load(Files.readString(CONFIG))
        .get("modules");
    for (String config : new String[] {"prometheus.yml", "kubernetes.yml"}) {
      Map<String, Object> prometheus = new Yaml().load(Files.readString(Repo.ROOT.resolve("deploy/prometheus").resolve(config)));
      Map<String, Object> probe = ((java.util.List<Map<String, Object>>) prometheus.get("scrape_configs")).stream()
          .filter(job -> "probe-gateway".equals(job.get("job_name"))).findFirst().orElseThrow();
      java.util.List<String> module = (java.util.List<String>) ((Map<String, Object>) probe.get("params")).get("module");
      assertThat(modules).as(config + "'s probe module").containsKey(module.get(0));
    }
  }

  @Test
  void theComposeModule_succeedsOnServing_andFailsOtherwise(@TempDir Path dir) throws Exception {
    HealthStatusManager health = new HealthStatusManager();
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(health.getHealthService()).build().start();
    int port = Tools.freePort();
    Process exporter = new ProcessBuilder(binary(), "--config.file=" + CONFIG, "--web.listen-address=127.0.0.1:" + port)
        .redirectErrorStream(true).redirectOutput(dir.resolve("blackbox.log").toFile()).start();
    try {
      String probe = "http://127.0.0.1:" + port + "/probe?module=grpc_health&target=127.0.0.1:" + server.getPort();
      Awaitility.await("the exporter answers").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
          .ignoreExceptions().until(() -> get(probe).statusCode() == 200);
      assertThat(get(probe).body()).contains("\nprobe_success 1\n");

      health.setStatus("", ServingStatus.NOT_SERVING);
      assertThat(get(probe).body()).contains("\nprobe_success 0\n");
    } finally {
      exporter.destroy();
      exporter.waitFor(10, TimeUnit.SECONDS);
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The exporter from BLACKBOX_EXPORTER_BIN or the PATH (a missing tool fails, never skips). */
  private static String binary() {
    return Tools.require("BLACKBOX_EXPORTER_BIN", "prometheus-blackbox-exporter", "prometheus-blackbox-exporter",
        "blackbox_exporter");
  }
}
