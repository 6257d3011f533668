package dev.warehouse.deployment;

import dev.warehouse.gateway.GatewayConfig;
import static org.assertj.core.api.Assertions.assertThat;

import org.assertj.core.api.InstanceOfAssertFactories;

import dev.warehouse.gateway.auth.AccessPolicy;
import dev.warehouse.gateway.auth.AuthMode;
import dev.warehouse.devkit.DevTokens;
import dev.warehouse.devkit.CertsCommand;
import dev.warehouse.devkit.LocalCa;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.order.OrderMain;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.process.HealthProbe;
import dev.warehouse.runtime.tls.PeerIdentity;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.tls.TransportSecurity;
import dev.warehouse.runtime.tls.TrustedPeers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * No Docker engine runs here, so docker-compose.yml is kept honest by reading it: every variable it
 * sets is one the process reads, ports agree with the processes' defaults, the health checks, the
 * Prometheus targets and the local stack (run.sh), every file it mounts or builds from exists, its
 * TLS settings name the files and identities the {@code certs} service makes and hold together, each
 * container sees only its own key, and nothing but the gateway could be published beyond loopback.
 */
@Tag("deployment")
class ComposeFileTest {

  private static final Path ROOT = Repo.ROOT;
  private static final Pattern COMPOSE_DURATION_PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(us|ms|s|m|h)");
  private static final String CERTS_MOUNT = "/certs";
  private static final String DEV_KIT_IMAGE = "warehouse/dev-kit:local";
  private static final String DEMO_CUSTOMER = "C4821";
  private static final List<String> SERVERS = List.of("inventory-service", "order-service", "gateway");
  private static Map<String, Object> compose;
  private static Map<String, Map<String, Object>> services;

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void read() throws IOException {
    compose = new Yaml().load(Files.readString(ROOT.resolve("docker-compose.yml")));
    services = (Map<String, Map<String, Object>>) compose.get("services");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> env(String service) {
    return (Map<String, String>) services.get(service).get("environment");
  }

  @SuppressWarnings("unchecked")
  private static List<String> list(String service, String key) {
    return (List<String>) services.get(service).get(key);
  }

  @SuppressWarnings("unchecked")
  private static List<String> healthcheck(String service) {
    return (List<String>) ((Map<String, Object>) services.get(service).get("healthcheck")).get("test");
  }

  @SuppressWarnings("unchecked")
  private static String buildModule(String service) {
    Map<String, Object> build = (Map<String, Object>) services.get(service).get("build");
    return ((Map<String, String>) build.get("args")).get("MODULE");
  }

  @Test
  void startsEveryPartOfTheSystem() {
    assertThat(services).containsOnlyKeys(
        "certs", "dev-tokens", "moto", "inventory-service", "order-service", "gateway", "init", "prometheus", "pushgateway",
        "blackbox", "jaeger", "grafana");
    services.forEach((name, service) -> {
      Object image = service.get("image");
      assertThat(image).as(name + " image").isNotNull();
      assertThat(image.toString()).as(name + " image is pinned").contains(":").doesNotEndWith(":latest");
    });
  }

  @Test
  void moto_runsThroughOurSerializingLauncher() {
    assertThat(list("moto", "entrypoint")).contains("/launcher/serialized_moto_server.py", "5000");
    assertThat(list("moto", "volumes")).contains("./tools/moto:/launcher:ro");
    assertThat(ROOT.resolve("tools/moto/serialized_moto_server.py")).isRegularFile();
  }

  /**
   * The moto that compose and the local Kubernetes overlay run is the one the tests run: the version pinned in
   * tools/python-requirements.txt, which ./test.sh and ./run.sh install.
   */
  @Test
  void moto_isThePinnedVersion_inComposeAndInTheLocalOverlay() throws IOException {
    Matcher pin = Pattern.compile("(?m)^moto\\[server\\]==(\\S+)$")
        .matcher(Files.readString(ROOT.resolve("tools/python-requirements.txt")));
    assertThat(pin.find()).as("moto's pin in tools/python-requirements.txt").isTrue();
    String image = "motoserver/moto:" + pin.group(1);
    assertThat(services.get("moto").get("image")).isEqualTo(image);
    assertThat(Files.readString(ROOT.resolve("deploy/k8s/overlays/local/moto.yaml"))).contains("image: " + image + " ");
  }

  @Test
  void services_setOnlyVariablesTheyRead_withTheirOwnPorts() throws IOException {
    assertService("inventory-service", InventoryMain.DEFAULT_GRPC_PORT, InventoryMain.DEFAULT_METRICS_PORT,
        InventoryMain.variables());
    assertService("order-service", OrderMain.DEFAULT_GRPC_PORT, OrderMain.DEFAULT_METRICS_PORT, OrderMain.variables());
    assertService("gateway", GatewayConfig.DEFAULT_GRPC_PORT, GatewayConfig.DEFAULT_METRICS_PORT, GatewayConfig.variables());
    for (String service : List.of("inventory-service", "order-service")) {
      assertThat(env(service)).containsEntry("DYNAMODB_ENDPOINT", "http://moto:5000").containsEntry("TABLE_AUTO_CREATE", "true");
      assertThat(env(service).get("TABLE_NAME")).isEqualTo(env("inventory-service").get("TABLE_NAME"));
    }
  }

  private static void assertService(String name, int grpcPort, int metricsPort, List<String> variables)
      throws IOException {
    assertThat(variables).as(name + " reads").containsAll(env(name).keySet());
    assertThat(env(name)).containsEntry("GRPC_PORT", Integer.toString(grpcPort))
        .containsEntry("METRICS_PORT", Integer.toString(metricsPort));
    assertThat(list(name, "ports")).containsExactlyInAnyOrder(
        "127.0.0.1:" + grpcPort + ":" + grpcPort, "127.0.0.1:" + metricsPort + ":" + metricsPort);
    List<String> probe = new ArrayList<>(List.of("CMD", "java"));
    probe.addAll(ClassDataArchiveTest.imageFlags());
    probe.addAll(List.of("-cp", "/app/app.jar", HealthProbe.class.getName(), Integer.toString(grpcPort)));
    assertThat(healthcheck(name)).isEqualTo(probe);
    assertThat(buildModule(name)).isEqualTo(name);
    assertThat(ROOT.resolve(name).resolve("pom.xml")).isRegularFile();
  }

  /**
   * On SIGTERM a process drains ({@code SHUTDOWN_DRAIN_MS}) and then waits {@code SHUTDOWN_GRACE_SECONDS}
   * for calls in flight, as its own configuration reads them from the compose file (or their defaults);
   * Docker must give it longer than both before it kills it, and its default (10 s) is shorter.
   */
  @Test
  void everyServer_getsAStopGracePeriod_longerThanItsDrainAndGrace() {
    for (String name : List.of("inventory-service", "order-service", "gateway")) {
      // Only the shutdown settings: the others hold compose interpolations such as ${PAGE_TOKEN_KEY:-}.
      Map<String, String> shutdown = new HashMap<>(env(name));
      shutdown.keySet().removeIf(variable -> !variable.startsWith("SHUTDOWN_"));
      shutdown.put("AUTH_MODE", "none"); // the gateway's other required settings are not what this reads
      Duration drainAndGrace;
      if (name.equals("gateway")) {
        GatewayConfig config = GatewayConfig.fromEnvironment(shutdown);
        drainAndGrace = config.shutdownDrain().plus(config.shutdownGrace());
      } else {
        StoreServiceConfig config = StoreServiceConfig.fromEnvironment(name, 1, 1, shutdown);
        drainAndGrace = config.shutdownDrain().plus(config.shutdownGrace());
      }
      Object period = services.get(name).get("stop_grace_period");
      assertThat(period).as(name + " stop_grace_period (Docker's default is 10 s)").isNotNull();
      assertThat(composeDuration(period.toString())).as(name + " stop_grace_period").isGreaterThan(drainAndGrace);
    }
  }

  @Test
  void composeDurations_readAsComposeReadsThem() {
    assertThat(composeDuration("35s")).isEqualTo(Duration.ofSeconds(35));
    assertThat(composeDuration("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(composeDuration("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(composeDuration("2h")).isEqualTo(Duration.ofHours(2));
    assertThat(composeDuration("250ms")).isEqualTo(Duration.ofMillis(250));
  }

  /** A compose duration ({@code 1m30s}, {@code 35s}, {@code 250ms}: numbers with us, ms, s, m or h). */
  private static Duration composeDuration(String text) {
    Matcher part = COMPOSE_DURATION_PART.matcher(text);
    long nanos = 0;
    int end = 0;
    while (part.find() && part.start() == end) {
      double value = Double.parseDouble(part.group(1));
      long unit = switch (part.group(2)) {
        case "us" -> 1_000L;
        case "ms" -> 1_000_000L;
        case "s" -> 1_000_000_000L;
        case "m" -> 60_000_000_000L;
        default -> 3_600_000_000_000L;
      };
      nanos += Math.round(value * unit);
      end = part.end();
    }
    if (end == 0 || end != text.length()) {
      throw new IllegalArgumentException("not a compose duration: '" + text + "'");
    }
    return Duration.ofNanos(nanos);
  }

  @Test
  void gateway_andInit_pointAtTheServicesTheyNeed() {
    assertThat(env("gateway")).containsEntry("INVENTORY_ADDRESSES", "inventory-service:" + env("inventory-service").get("GRPC_PORT"))
        .containsEntry("ORDER_ADDRESSES", "order-service:" + env("order-service").get("GRPC_PORT"));
    assertThat(list("init", "command")).containsExactly("load-demo-data", "--token-file", "/auth/admin.jwt",
        "gateway:" + env("gateway").get("GRPC_PORT"));
    assertThat(services.get("init").get("image")).isEqualTo(DEV_KIT_IMAGE);
  }

  /** A one-shot service (restart "no") is waited for until it finished well; every other until healthy. */
  @Test
  @SuppressWarnings("unchecked")
  void everyDependency_waitsForHealth_orForAOneShotToSucceed_andEveryDependedOnServiceHasAHealthCheck() {
    services.forEach((name, service) -> {
      Map<String, Map<String, String>> dependsOn = (Map<String, Map<String, String>>) service.get("depends_on");
      if (dependsOn == null) {
        return;
      }
      dependsOn.forEach((dependency, condition) -> {
        if ("no".equals(services.get(dependency).get("restart"))) {
          assertThat(condition).as(name + " -> " + dependency).containsEntry("condition", "service_completed_successfully");
        } else {
          assertThat(condition).as(name + " -> " + dependency).containsEntry("condition", "service_healthy");
          assertThat(services.get(dependency)).as(dependency).containsKey("healthcheck");
        }
      });
    });
  }

  /**
   * The gateway authenticates with the development policy and the key dev-tokens makes: the policy file
   * it mounts exists, its JWKS and the loader's admin token are where dev-tokens writes them, the issuer
   * and audience are the development tokens' (as in run.sh), and its settings pass its own checks.
   */
  @Test
  void gateway_authenticates_withTheDevelopmentPolicyAndTheKeyDevTokensMakes() throws IOException {
    Map<String, String> gateway = env("gateway");
    assertThat(gateway).containsEntry("AUTH_MODE", "jwt")
        .containsEntry("AUTH_JWT_ISSUER", DevTokens.ISSUER).containsEntry("AUTH_JWT_AUDIENCE", DevTokens.AUDIENCE);
    // The TLS settings name files of the certs volume, checked by the TLS test; here, the rest of the settings.
    Map<String, String> withoutTls = new HashMap<>(gateway);
    withoutTls.keySet().removeIf(v -> v.startsWith("TLS_") || v.startsWith("BACKEND_") || v.startsWith("GRPC_TLS")
        || v.endsWith("_TRUSTED_PEERS"));
    GatewayConfig config = GatewayConfig.fromEnvironment(withoutTls);
    assertThat(config.auth().mode()).isEqualTo(AuthMode.JWT);

    List<String> devTokens = list("dev-tokens", "command");
    // The demo customer's token names the demo data's customer: the customer role's scope is its sub.
    assertThat(devTokens).hasSize(5).first().isEqualTo("dev-tokens");
    assertThat(devTokens.subList(3, 5)).containsExactly("--subject", "customer=" + DEMO_CUSTOMER);
    String authDir = devTokens.get(1);
    String volume = "dev-auth:" + authDir;
    assertThat(list("dev-tokens", "volumes")).contains(volume);
    assertThat(list("gateway", "volumes")).contains(volume + ":ro");
    assertThat(list("init", "volumes")).contains(volume + ":ro");
    assertThat(gateway.get("AUTH_JWKS_FILE")).isEqualTo(authDir + "/" + DevTokens.JWKS_FILE);
    assertThat(list("init", "command")).containsSequence("--token-file", authDir + "/admin.jwt");

    String policyMount = "./deploy/auth/policy.dev.yaml:" + gateway.get("AUTH_POLICY_FILE") + ":ro";
    assertThat(list("gateway", "volumes")).contains(policyMount);
    assertThat(list("dev-tokens", "volumes")).contains(policyMount);
    assertThat(devTokens.get(2)).isEqualTo(gateway.get("AUTH_POLICY_FILE"));
    assertThat(ROOT.resolve("deploy/auth/policy.dev.yaml")).isRegularFile();
    assertThat(AccessPolicy.read(ROOT.resolve("deploy/auth/policy.dev.yaml")).roles()).contains("admin");
    // A new volume takes the owner of the image's directory: the dev kit's non-root user must own it to write there.
    assertThat(devKitStage()).containsPattern("mkdir -p [^\\n]* " + authDir + " ").containsPattern("chown app [^\\n]* " + authDir + " ");

    assertThat(Files.readString(ROOT.resolve("run.sh"))).contains("AUTH_JWT_ISSUER=" + DevTokens.ISSUER,
        "AUTH_JWT_AUDIENCE=" + DevTokens.AUDIENCE, "deploy/auth/policy.dev.yaml", "--token-file");
  }

  /** The dev kit's one-shots (certs, dev-tokens, init) run its own image, built from the Dockerfile's dev-kit stage. */
  @Test
  @SuppressWarnings("unchecked")
  void oneShots_runTheDevKitImage_andNoServerDoes() throws IOException {
    for (String oneShot : List.of("certs", "dev-tokens", "init")) {
      assertThat(services.get(oneShot).get("image")).as(oneShot).isEqualTo(DEV_KIT_IMAGE);
      assertThat(services.get(oneShot).get("restart")).as(oneShot).isEqualTo("no");
      Map<String, Object> build = (Map<String, Object>) services.get(oneShot).get("build");
      assertThat(build).as(oneShot).containsEntry("target", "dev-kit");
      assertThat(buildModule(oneShot)).isEqualTo("dev-kit");
    }
    for (String server : SERVERS) {
      assertThat(services.get(server).get("image")).as(server).isNotEqualTo(DEV_KIT_IMAGE);
      assertThat(services.get(server)).as(server).doesNotContainKey("command"); // the image's own process
    }
    assertThat(devKitStage()).contains("COPY --from=build /src/dev-kit/target/dev-kit.jar");
  }

  /**
   * Each container sees only its own private key: the certs one-shot runs (its command, with its mounts
   * re-rooted in a temporary directory), and every long-running container's mounts are then listed as it would
   * see them. The CA's key is in no long-running container, and no key of one process in another's.
   */
  @Test
  void eachLongRunningContainer_seesOnlyItsOwnKey_andNeverTheCasKey(@TempDir Path root) throws IOException {
    Map<String, Path> volumes = runCerts(root);
    services.forEach((name, service) -> {
      if ("no".equals(service.get("restart"))) {
        return; // a one-shot: gone once done
      }
      List<String> keys = new ArrayList<>();
      for (String mount : mounts(name)) {
        String[] parts = mount.split(":");
        Path seen = volumes.containsKey(parts[0]) ? volumes.get(parts[0])
            : parts[0].startsWith("./") ? ROOT.resolve(parts[0].substring(2)) : null;
        if (seen != null && Files.isDirectory(seen)) {
          try (var files = Files.walk(seen)) {
            files.map(file -> file.getFileName().toString()).filter(file -> file.endsWith("-key.pem")).forEach(keys::add);
          } catch (IOException e) {
            throw new AssertionError(e);
          }
        }
      }
      assertThat(keys).as(name + "'s private keys").isSubsetOf(name + "-key.pem").doesNotContain("ca-key.pem");
      if (SERVERS.contains(name)) {
        assertThat(keys).as(name + " has its own key").containsExactly(name + "-key.pem");
      }
    });
  }

  /** Only the gateway's client port may be published beyond the host's loopback (and here it is not either). */
  @Test
  void everyPublishedPort_isOnTheHostsLoopback_butTheGatewaysClientPort() {
    String gatewayClientPort = env("gateway").get("GRPC_PORT");
    services.forEach((name, service) -> {
      for (String port : list(name, "ports") == null ? List.<String>of() : list(name, "ports")) {
        boolean gatewayClient = name.equals("gateway") && port.endsWith(":" + gatewayClientPort);
        if (!gatewayClient) {
          assertThat(port).as(name + " publishes " + port).startsWith("127.0.0.1:");
        }
      }
    });
  }

  /**
   * The TLS settings, with the certificates the {@code certs} one-shot makes in place of each process's volume:
   * each process's configuration reads and loads (files exist, keys match), each presents its own identity,
   * the services trust only the gateway's, and the gateway checks exactly the services' identities.
   */
  @Test
  void tlsSettings_nameTheCertificatesTheCertsServiceMakes_andHoldTogether(@TempDir Path root) throws Exception {
    Map<String, Path> volumes = runCerts(root);
    Map<String, String> identities = new HashMap<>();
    for (String name : SERVERS) {
      Path own = mounts(name).stream().map(mount -> mount.split(":"))
          .filter(parts -> parts[1].equals(CERTS_MOUNT)).map(parts -> volumes.get(parts[0])).findFirst().orElseThrow();
      Map<String, String> tls = new HashMap<>();
      env(name).forEach((variable, value) -> {
        if (variable.startsWith("TLS_") || variable.startsWith("GRPC_TLS_") || variable.startsWith("BACKEND_")) {
          tls.put(variable, value.startsWith(CERTS_MOUNT + "/") ? own + value.substring(CERTS_MOUNT.length()) : value);
        }
      });
      TlsConfig config = TlsConfig.fromEnvironment(tls);
      try (TransportSecurity loaded = TransportSecurity.load(config)) {
        identities.put(name, PeerIdentity.of(loaded.certificate().orElseThrow()).orElseThrow().uri());
      }
      assertThat(identities.get(name)).as(name + "'s certificate").isEqualTo(LocalCa.spiffeId(name));
    }
    for (String service : List.of("inventory-service", "order-service")) {
      assertThat(env(service)).containsEntry("GRPC_TLS_MODE", "mtls");
      assertThat(TrustedPeers.of(List.of(env(service).get("TLS_TRUSTED_PEERS").split(","))).identities())
          .as(service + " admits only the gateway").containsExactly(identities.get("gateway"));
    }
    assertThat(env("gateway")).containsEntry("BACKEND_TLS_MODE", "mtls");
    // Each backend channel admits its own service's identity only: the inventory channel never the order-service's.
    assertThat(env("gateway")).containsEntry("INVENTORY_TRUSTED_PEERS", identities.get("inventory-service"))
        .containsEntry("ORDER_TRUSTED_PEERS", identities.get("order-service"));
  }

  /** Runs the certs one-shot's command with its mounts under {@code root}; returns each named volume's directory. */
  private static Map<String, Path> runCerts(Path root) {
    Map<String, Path> volumes = new HashMap<>();
    for (String mount : mounts("certs")) {
      String[] parts = mount.split(":");
      assertThat(compose.get("volumes")).as("named volume " + parts[0]).asInstanceOf(InstanceOfAssertFactories.MAP).containsKey(parts[0]);
      volumes.put(parts[0], root.resolve(parts[1].substring(1)));
    }
    List<String> command = list("certs", "command");
    assertThat(command.get(0)).isEqualTo("certs");
    String[] args = command.stream().skip(1)
        .map(arg -> arg.startsWith("/") ? root.resolve(arg.substring(1)).toString() : arg).toArray(String[]::new);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThat(CertsCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8))).as(out.toString()).isZero();
    return volumes;
  }

  private static List<String> mounts(String service) {
    return list(service, "volumes") == null ? List.of() : list(service, "volumes");
  }

  /** The Dockerfile's dev-kit stage: from its FROM line to the next. */
  private static String devKitStage() throws IOException {
    String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
    int from = dockerfile.indexOf(" AS dev-kit\n");
    assertThat(from).as("the Dockerfile's dev-kit stage").isPositive();
    return dockerfile.substring(from, dockerfile.indexOf("\nFROM ", from));
  }

  @Test
  void prometheus_scrapesEveryProcessOnItsMetricsPort() throws IOException {
    String config = Files.readString(ROOT.resolve("deploy/prometheus/prometheus.yml"));
    for (String service : List.of("gateway", "inventory-service", "order-service")) {
      assertThat(config).contains("\"" + service + ":" + env(service).get("METRICS_PORT") + "\"");
    }
    assertThat(list("prometheus", "volumes")).contains("./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro",
        "./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro");
    // Relative rule files resolve beside the config: /etc/prometheus/alerts.yml in the container.
    assertThat(config).contains("rule_files:\n  - alerts.yml\n");
    // The audits' pushes keep their own job and audit labels.
    assertThat(config).contains("  - job_name: pushgateway\n    honor_labels: true\n    static_configs:\n"
        + "      - targets: [\"pushgateway:9091\"]\n");
    assertThat(list("pushgateway", "ports")).containsExactly("127.0.0.1:9094:9091");
    // The front door's black-box probe: the gateway's client port, through the blackbox service.
    assertThat(config).contains("      - targets: [\"gateway:" + env("gateway").get("GRPC_PORT") + "\"]\n")
        .contains("        replacement: blackbox:9115\n");
    assertThat(list("blackbox", "volumes")).containsExactly("./deploy/blackbox/blackbox.yml:/etc/blackbox/blackbox.yml:ro");
  }

  @Test
  void everyProcess_sendsItsSpansToJaeger_andGrafanaLinksExemplarsToIt() throws IOException {
    for (String process : List.of("gateway", "inventory-service", "order-service")) {
      assertThat(env(process)).as(process).containsEntry("OTEL_TRACES_EXPORTER", "otlp")
          .containsEntry("OTEL_EXPORTER_OTLP_ENDPOINT", "http://jaeger:4318");
    }
    assertThat(env("jaeger")).containsEntry("COLLECTOR_OTLP_ENABLED", "true");
    assertThat(list("jaeger", "ports")).containsExactly("127.0.0.1:16686:16686");
    assertThat(list("prometheus", "command")).contains("--enable-feature=exemplar-storage",
        "--config.file=/etc/prometheus/prometheus.yml");
    assertThat(Files.readString(ROOT.resolve("deploy/grafana/provisioning/datasources/jaeger.yml")))
        .contains("uid: jaeger").contains("url: http://jaeger:16686");
    assertThat(Files.readString(ROOT.resolve("deploy/grafana/provisioning/datasources/prometheus.yml")))
        .contains("datasourceUid: jaeger");
  }

  @Test
  void grafana_isProvisioned_withAnonymousViewers_whoCannotEdit() throws IOException {
    assertThat(env("grafana")).containsEntry("GF_AUTH_ANONYMOUS_ENABLED", "true").containsEntry("GF_AUTH_ANONYMOUS_ORG_ROLE", "Viewer")
        .containsEntry("GF_USERS_VIEWERS_CAN_EDIT", "false").containsEntry("GF_USERS_ALLOW_SIGN_UP", "false");
    assertThat(list("grafana", "volumes")).contains(
        "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro", "./deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro");
    assertThat(Files.readString(ROOT.resolve("deploy/grafana/provisioning/datasources/prometheus.yml")))
        .contains("url: http://prometheus:9090").contains("uid: prometheus");
    assertThat(Files.readString(ROOT.resolve("deploy/grafana/provisioning/dashboards/warehouse.yml")))
        .contains("path: /var/lib/grafana/dashboards");
    assertThat(Repo.DASHBOARD).isRegularFile();
  }

  @Test
  void dockerfile_buildsWithTheWrapper_andRunsTheShadedJarAsNonRoot() throws IOException {
    String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
    assertThat(dockerfile).contains("AS build", "./mvnw", "-pl \"${MODULE}\"", "COPY --from=build /src/${MODULE}/target/${MODULE}.jar /app/app.jar",
        "USER 10001", "\"-jar\", \"/app/app.jar\"]");
    // build, the dev kit's stage, and the production stage last: the image a build without --target makes.
    assertThat(dockerfile.lines().filter(l -> l.startsWith("FROM ")).toList())
        .hasSize(3).last().asString().contains("jre").doesNotContain(" AS ");
    assertThat(dockerfile.substring(dockerfile.lastIndexOf("\nFROM "))).doesNotContain("dev-kit", "/certs", "/auth");
    // The jar the image copies is the one each module's build makes: target/<artifactId>.jar, artifactId = folder.
    assertThat(Files.readString(ROOT.resolve("pom.xml"))).contains("<finalName>${project.artifactId}</finalName>");
    for (String module : List.of("inventory-service", "order-service", "gateway")) {
      assertThat(Files.readString(ROOT.resolve(module).resolve("pom.xml"))).contains("<artifactId>" + module + "</artifactId>");
    }
  }

  @Test
  void localStack_usesTheSamePortsAsCompose() throws IOException {
    String run = Files.readString(ROOT.resolve("run.sh"));
    // The same identities and modes as compose.
    assertThat(run).contains("GATEWAY_ID=" + env("inventory-service").get("TLS_TRUSTED_PEERS"),
        "INVENTORY_ID=" + env("gateway").get("INVENTORY_TRUSTED_PEERS"), "ORDER_ID=" + env("gateway").get("ORDER_TRUSTED_PEERS"),
        "GRPC_TLS_MODE=mtls", "BACKEND_TLS_MODE=mtls",
        "DEV_KIT=(java -jar dev-kit/target/dev-kit.jar)", "\"${DEV_KIT[@]}\" certs \"$CERTS\"");
    assertThat(run).contains("GATEWAY_GRPC_PORT:-" + env("gateway").get("GRPC_PORT"),
        "GATEWAY_METRICS_PORT:-" + env("gateway").get("METRICS_PORT"),
        "INVENTORY_GRPC_PORT:-" + env("inventory-service").get("GRPC_PORT"),
        "INVENTORY_METRICS_PORT:-" + env("inventory-service").get("METRICS_PORT"),
        "ORDER_GRPC_PORT:-" + env("order-service").get("GRPC_PORT"),
        "ORDER_METRICS_PORT:-" + env("order-service").get("METRICS_PORT"),
        "MOTO_PORT:-5000");
  }
}
