package dev.warehouse.deployment;

import dev.warehouse.gateway.GatewayConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.devkit.CertsCommand;
import dev.warehouse.devkit.DevTokens;
import dev.warehouse.devkit.LocalCa;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.InventorySettings;
import dev.warehouse.order.OrderMain;
import dev.warehouse.runtime.audit.AuditPushgateway;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.tls.PeerIdentity;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.tls.TransportSecurity;
import dev.warehouse.testing.Commands;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.JacksonAnnotationIntrospector;
import tools.jackson.databind.json.JsonMapper;

/**
 * Renders both overlays of deploy/k8s with {@code kubectl kustomize}, reads every object into fabric8's
 * typed Kubernetes models, strictly (a field the model does not have fails, where fabric8 would keep it
 * aside), and checks the objects against what the processes read, as {@link ComposeFileTest} does for
 * compose: every variable is one the process reads, ports and probes are the processes' defaults, the
 * shutdown fits in the grace period, the pods are locked down, the gateway resolves the backends'
 * headless Services, and the ConfigMaps are the repository's files byte for byte. The audits' CronJobs are
 * held to the same rules, run their service's jar on its table under their own ServiceAccount, daily as
 * the AuditNotRunning alert assumes, and push to the Pushgateway that Prometheus scrapes.
 *
 * <p>The local overlay reads development credentials from its ignored secrets/ directory; the test renders
 * a copy of deploy/ with credentials made by the same commands as make-secrets.sh, so it needs no setup
 * and writes nothing into the work tree.
 */
@Tag("deployment")
class KubernetesManifestsTest {

  /** The plaintext, health-only port every process serves for kubelet's gRPC probe (HEALTH_PORT). */
  private static final int HEALTH_PORT = 8086;

  private static final Path ROOT = Repo.ROOT;
  private static final List<String> PROCESSES = List.of("inventory-service", "order-service", "gateway");
  private static final List<String> BACKENDS = List.of("inventory-service", "order-service");
  /** Each audit's CronJob and the service whose jar (and image, and settings) it runs. */
  private static final Map<String, String> AUDITS = Map.of("inventory-audit", "inventory-service", "order-audit", "order-service");
  /** The audits' ServiceAccount, which EKS Pod Identity binds to the template's AuditRole (docs/operations/deploy.md). */
  private static final String AUDIT_ACCOUNT = "warehouse-audit";
  private static final String PUSHGATEWAY = "pushgateway";
  /** The job of the black-box probe of the gateway's front door (the outage alerts select it). */
  private static final String PROBE = "probe-gateway";
  /** The settings that say which table a process reads: an audit must read the one its service writes. */
  private static final List<String> TABLE_SETTINGS = List.of("AWS_REGION", "TABLE_NAME", "DYNAMODB_ENDPOINT",
      InventorySettings.LOW_STOCK_SHARDS);
  private static final Pattern DAILY = Pattern.compile("(\\d{1,2}) (\\d{1,2}) \\* \\* \\*");
  private static final Pattern NOT_RUNNING_AFTER = Pattern.compile("> (\\d+) \\* 86400");
  /** The JVM's own variable (the Dockerfile sets it too); every other one must be the process's. */
  private static final String JVM_OPTIONS = "JAVA_TOOL_OPTIONS";
  /** What production's operator creates (deploy/k8s/overlays/production/kustomization.yaml says so). */
  private static final Set<String> SUPPLIED_BY_OPERATOR = Set.of("page-token-key", "inventory-service-tls",
      "order-service-tls", "gateway-tls", "gateway-auth-policy", "gateway-jwks");
  private static final Pattern MAX_RAM_PERCENTAGE = Pattern.compile("-XX:MaxRAMPercentage=(\\d+(?:\\.\\d+)?)");
  /** The heap the services are measured with (bench, StackProcess: -Xmx256m). */
  private static final long MEASURED_HEAP = 256L << 20;
  /** Metaspace, code cache, threads' stacks and Netty's direct buffers: an allowance, not a measurement. */
  private static final long NON_HEAP = 160L << 20;
  private static final ObjectMapper STRICT = strictMapper();
  private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of(
      "v1/Namespace", Namespace.class,
      "v1/ServiceAccount", ServiceAccount.class,
      "v1/ConfigMap", ConfigMap.class,
      "v1/Secret", Secret.class,
      "v1/Service", Service.class,
      "apps/v1/Deployment", Deployment.class,
      "autoscaling/v2/HorizontalPodAutoscaler", HorizontalPodAutoscaler.class,
      "policy/v1/PodDisruptionBudget", PodDisruptionBudget.class,
      "networking.k8s.io/v1/NetworkPolicy", NetworkPolicy.class,
      "batch/v1/CronJob", CronJob.class);

  @TempDir
  static Path work;
  private static final Map<String, List<HasMetadata>> rendered = new HashMap<>();

  @BeforeAll
  static void renderBothOverlays() throws Exception {
    // Missing kubectl fails every check here rather than skipping it: a clean machine must not pass with
    // Kubernetes unchecked. ./test.sh says the same before Maven starts.
    assertThat(kubectlAvailable()).as("kubectl is not on the PATH, so deploy/k8s cannot be rendered and checked;"
        + " install kubectl 1.21 or later (its kustomize must know `patches:`), see docs/running.md").isTrue();
    // local: a copy of deploy/ and the moto launcher, with development credentials where make-secrets.sh puts them.
    Path copy = work.resolve("repo");
    copyTree(ROOT.resolve("deploy"), copy.resolve("deploy"));
    copyTree(ROOT.resolve("tools/moto"), copy.resolve("tools/moto"));
    Path secrets = copy.resolve("deploy/k8s/overlays/local/secrets");
    CertsCommand.ensure(secrets.resolve("certs"), false, Instant.now());
    DevTokens.write(secrets.resolve("auth"), DevTokens.roles(ROOT.resolve("deploy/auth/policy.dev.yaml")),
        Duration.ofHours(1), Instant.now());
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    Files.writeString(secrets.resolve("page-token-key.env"), "PAGE_TOKEN_KEY=" + Base64.getEncoder().encodeToString(key) + "\n");
    rendered.put("local", parse(kustomize(copy.resolve("deploy/k8s/overlays/local"))));
    // production needs nothing that is not committed.
    rendered.put("production", parse(kustomize(ROOT.resolve("deploy/k8s/overlays/production"))));
  }

  // ---- reading ----

  /** Jackson that fails on a field the model lacks: fabric8's models would otherwise keep it in additionalProperties. */
  private static ObjectMapper strictMapper() {
    return JsonMapper.builder()
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .annotationIntrospector(new JacksonAnnotationIntrospector() {
          @Override
          public Boolean hasAnySetter(MapperConfig<?> config, Annotated member) {
            return Boolean.FALSE;
          }
        })
        .build();
  }

  private static boolean kubectlAvailable() {
    try {
      Process process = new ProcessBuilder("kubectl", "version", "--client").redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static String kustomize(Path overlay) throws Exception {
    Commands.Run run = Commands.run(new ProcessBuilder("kubectl", "kustomize", overlay.toString()), Duration.ofSeconds(120));
    assertThat(run.exitValue()).as("kubectl kustomize " + overlay + ": " + run.errors()).isZero();
    return run.output();
  }

  private static List<HasMetadata> parse(String yaml) {
    List<HasMetadata> objects = new ArrayList<>();
    for (Object document : new Yaml().loadAll(yaml)) {
      if (document != null) {
        objects.add(typed(document));
      }
    }
    return objects;
  }

  @SuppressWarnings("unchecked")
  private static HasMetadata typed(Object document) {
    Map<String, Object> map = (Map<String, Object>) document;
    String kind = map.get("apiVersion") + "/" + map.get("kind");
    assertThat(KINDS).as("a kind this test knows").containsKey(kind);
    try {
      return STRICT.convertValue(map, KINDS.get(kind));
    } catch (RuntimeException e) {
      throw new AssertionError(kind + " " + ((Map<String, Object>) map.get("metadata")).get("name") + ": " + e.getMessage(), e);
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path path : (Iterable<Path>) paths::iterator) {
        Path relative = from.relativize(path);
        if (relative.startsWith("k8s/overlays/local/secrets")) {
          continue; // someone's own development credentials: the test makes its own
        }
        Path target = to.resolve(relative.toString());
        if (Files.isDirectory(path)) {
          Files.createDirectories(target);
        } else {
          Files.copy(path, target);
        }
      }
    }
  }

  private static <T extends HasMetadata> List<T> all(String overlay, Class<T> type) {
    return rendered.get(overlay).stream().filter(type::isInstance).map(type::cast).toList();
  }

  private static <T extends HasMetadata> T one(String overlay, Class<T> type, String name) {
    List<T> found = all(overlay, type).stream().filter(o -> o.getMetadata().getName().equals(name)).toList();
    assertThat(found).as(overlay + ": " + type.getSimpleName() + " " + name).hasSize(1);
    return found.get(0);
  }

  /** The generated objects carry a hash suffix (name-abc123fgh): the object the base's name became. */
  private static <T extends HasMetadata> Optional<T> generated(String overlay, Class<T> type, String referenced) {
    return all(overlay, type).stream().filter(o -> o.getMetadata().getName().equals(referenced)).findFirst();
  }

  private static Deployment deployment(String overlay, String name) {
    return one(overlay, Deployment.class, name);
  }

  private static PodSpec pod(String overlay, String name) {
    return deployment(overlay, name).getSpec().getTemplate().getSpec();
  }

  private static Container container(String overlay, String name) {
    return onlyContainer(overlay + " " + name, pod(overlay, name));
  }

  /** A pod's one container. */
  private static Container onlyContainer(String what, PodSpec pod) {
    assertThat(pod.getContainers()).as(what + " containers").hasSize(1);
    return pod.getContainers().get(0);
  }

  /** The literal variables; one set from a Secret reads as "valueFrom". */
  private static Map<String, String> env(String overlay, String name) {
    return literalEnv(overlay + " " + name, container(overlay, name));
  }

  private static int defaultGrpcPort(String name) {
    return switch (name) {
      case "inventory-service" -> InventoryMain.DEFAULT_GRPC_PORT;
      case "order-service" -> OrderMain.DEFAULT_GRPC_PORT;
      default -> GatewayConfig.DEFAULT_GRPC_PORT;
    };
  }

  private static int defaultMetricsPort(String name) {
    return switch (name) {
      case "inventory-service" -> InventoryMain.DEFAULT_METRICS_PORT;
      case "order-service" -> OrderMain.DEFAULT_METRICS_PORT;
      default -> GatewayConfig.DEFAULT_METRICS_PORT;
    };
  }

  private static List<String> variablesRead(String name) {
    return switch (name) {
      case "inventory-service" -> InventoryMain.variables();
      case "order-service" -> OrderMain.variables();
      default -> GatewayConfig.variables();
    };
  }

  private static boolean selects(Map<String, String> selector, Map<String, String> labels) {
    return selector != null && !selector.isEmpty() && labels.entrySet().containsAll(selector.entrySet());
  }

  private static Map<String, String> podLabels(String overlay, String name) {
    return deployment(overlay, name).getSpec().getTemplate().getMetadata().getLabels();
  }

  private static CronJob cronJob(String overlay, String name) {
    return one(overlay, CronJob.class, name);
  }

  private static JobSpec job(String overlay, String audit) {
    return cronJob(overlay, audit).getSpec().getJobTemplate().getSpec();
  }

  private static PodSpec auditPod(String overlay, String audit) {
    return job(overlay, audit).getTemplate().getSpec();
  }

  private static Container auditContainer(String overlay, String audit) {
    return onlyContainer(overlay + " " + audit, auditPod(overlay, audit));
  }

  private static Map<String, String> literalEnv(String what, Container container) {
    Map<String, String> env = new LinkedHashMap<>();
    for (EnvVar variable : container.getEnv()) {
      assertThat(env).as(what + ": " + variable.getName() + " set once").doesNotContainKey(variable.getName());
      env.put(variable.getName(), variable.getValue() != null ? variable.getValue() : "valueFrom");
    }
    return env;
  }

  /** Every pod template the overlay runs, by the name of its Deployment or CronJob. */
  private static Map<String, PodSpec> podTemplates(String overlay) {
    Map<String, PodSpec> pods = new LinkedHashMap<>();
    all(overlay, Deployment.class).forEach(d -> pods.put(d.getMetadata().getName(), d.getSpec().getTemplate().getSpec()));
    all(overlay, CronJob.class).forEach(c -> pods.put(c.getMetadata().getName(),
        c.getSpec().getJobTemplate().getSpec().getTemplate().getSpec()));
    return pods;
  }

  /**
   * Whether a NetworkPolicy's {@code selector} picks {@code labels}, as Kubernetes reads it: an empty
   * selector picks every pod. Only the In operator is used here.
   */
  private static boolean selects(LabelSelector selector, Map<String, String> labels) {
    if (selector == null) {
      return false;
    }
    if (selector.getMatchLabels() != null && !labels.entrySet().containsAll(selector.getMatchLabels().entrySet())) {
      return false;
    }
    if (selector.getMatchExpressions() != null) {
      for (LabelSelectorRequirement requirement : selector.getMatchExpressions()) {
        assertThat(requirement.getOperator()).as("a selector operator this test reads").isEqualTo("In");
        if (!requirement.getValues().contains(labels.get(requirement.getKey()))) {
          return false;
        }
      }
    }
    return true;
  }

  // ---- the checks ----

  @Test
  void strictReading_rejectsAFieldTheModelDoesNotHave() {
    Map<String, Object> typo = new Yaml().load("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: x}
        spec:
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              containers:
                - name: x
                  image: x
                  readinesProbe: {grpc: {port: 1}}
        """);
    assertThatThrownBy(() -> typed(typo)).isInstanceOf(AssertionError.class).hasMessageContaining("readinesProbe");
    Map<String, Object> unknownKind = new Yaml().load("{apiVersion: v1, kind: Pod, metadata: {name: x}}");
    assertThatThrownBy(() -> typed(unknownKind)).isInstanceOf(AssertionError.class).hasMessageContaining("v1/Pod");
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void everyProcess_hasItsDeployment_account_autoscaler_budget_andPolicy(String overlay) {
    for (String name : PROCESSES) {
      Deployment deployment = deployment(overlay, name);
      // The autoscaler owns the count: a replicas field would reset it on every apply.
      assertThat(deployment.getSpec().getReplicas()).as(overlay + " " + name + " replicas").isNull();
      assertThat(pod(overlay, name).getServiceAccountName()).isEqualTo(one(overlay, ServiceAccount.class, name).getMetadata().getName());
      assertThat(selects(deployment.getSpec().getSelector().getMatchLabels(), podLabels(overlay, name))).isTrue();

      HorizontalPodAutoscaler hpa = one(overlay, HorizontalPodAutoscaler.class, name);
      assertThat(hpa.getSpec().getScaleTargetRef().getKind()).isEqualTo("Deployment");
      assertThat(hpa.getSpec().getScaleTargetRef().getName()).isEqualTo(name);
      assertThat(hpa.getSpec().getMinReplicas()).isPositive().isLessThanOrEqualTo(hpa.getSpec().getMaxReplicas());
      assertThat(hpa.getSpec().getMetrics()).singleElement().satisfies(metric -> {
        assertThat(metric.getResource().getName()).isEqualTo("cpu");
        assertThat(metric.getResource().getTarget().getAverageUtilization()).isBetween(1, 100);
      });
      // CPU utilization is relative to the request: there must be one.
      assertThat(container(overlay, name).getResources().getRequests()).containsKeys("cpu", "memory");

      PodDisruptionBudget pdb = one(overlay, PodDisruptionBudget.class, name);
      assertThat(selects(pdb.getSpec().getSelector().getMatchLabels(), podLabels(overlay, name))).as(overlay + " " + name + " budget").isTrue();
      assertThat(all(overlay, NetworkPolicy.class).stream()
          .filter(p -> selects(p.getSpec().getPodSelector().getMatchLabels(), podLabels(overlay, name)))).as(name + " policy").isNotEmpty();
    }
    assertThat(all(overlay, Namespace.class)).extracting(n -> n.getMetadata().getName()).containsExactly("warehouse");
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void everyVariable_isOneTheProcessReads_andItsSettingsLoad(String overlay) {
    for (String name : PROCESSES) {
      Map<String, String> env = env(overlay, name);
      Set<String> own = new HashSet<>(env.keySet());
      own.remove(JVM_OPTIONS);
      assertThat(variablesRead(name)).as(overlay + " " + name + " reads").containsAll(own);
      // The heap follows the memory limit; a fixed -Xmx would not, and the limit must be there to follow.
      assertThat(env.get(JVM_OPTIONS)).contains("-XX:MaxRAMPercentage=").doesNotContain("-Xmx");
      assertThat(container(overlay, name).getResources().getLimits()).containsKey("memory");
      long limit = Quantity.getAmountInBytes(container(overlay, name).getResources().getLimits().get("memory")).longValueExact();
      Matcher percentage = MAX_RAM_PERCENTAGE.matcher(env.get(JVM_OPTIONS));
      assertThat(percentage.find()).isTrue();
      long heap = (long) (limit * Double.parseDouble(percentage.group(1)) / 100);
      // What the processes are measured with, and room beside the heap for what is not heap (no probe runs a JVM
      // beside it: everyJvmOfTheImages_startsFromTheImagesArchive).
      assertThat(heap).as(overlay + " " + name + " heap").isGreaterThanOrEqualTo(MEASURED_HEAP);
      assertThat(limit - heap).as(overlay + " " + name + " memory beside the heap").isGreaterThanOrEqualTo(NON_HEAP);

      // Every setting but the files (checked below against the mounts) passes the process's own checks.
      Map<String, String> settings = new HashMap<>(env);
      settings.keySet().removeIf(v -> v.startsWith("TLS_") || v.startsWith("GRPC_TLS") || v.startsWith("BACKEND_")
          || v.endsWith("_TRUSTED_PEERS")
          || v.startsWith("PAGE_TOKEN_"));
      if (name.equals("gateway")) {
        GatewayConfig.fromEnvironment(settings);
      } else {
        StoreServiceConfig.fromEnvironment(name, defaultGrpcPort(name), defaultMetricsPort(name), settings);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void portsAndProbes_areTheProcessDefaults_andTheProbesAskTheHealthOnlyPort(String overlay) {
    for (String name : PROCESSES) {
      int grpc = defaultGrpcPort(name);
      Map<String, String> env = env(overlay, name);
      assertThat(env).containsEntry("GRPC_PORT", Integer.toString(grpc))
          .containsEntry("METRICS_PORT", Integer.toString(defaultMetricsPort(name)))
          .containsEntry("HEALTH_PORT", Integer.toString(HEALTH_PORT));
      Map<String, Integer> ports = new HashMap<>();
      container(overlay, name).getPorts().forEach(p -> ports.put(p.getName(), p.getContainerPort()));
      assertThat(ports).containsExactlyInAnyOrderEntriesOf(
          Map.of("grpc", grpc, "metrics", defaultMetricsPort(name), "health", HEALTH_PORT));

      // kubelet's native gRPC probe speaks no TLS: it asks the plaintext, health-only port, whatever the gRPC port
      // speaks, and no probe starts a JVM.
      Container container = container(overlay, name);
      for (Probe probe : new Probe[] {container.getStartupProbe(), container.getReadinessProbe(), container.getLivenessProbe()}) {
        assertThat(probe).as(overlay + " " + name + " startup, readiness and liveness probes").isNotNull();
        assertThat(probe.getExec()).as(overlay + " " + name + ": no JVM per probe").isNull();
        assertThat(probe.getGrpc().getPort()).isEqualTo(HEALTH_PORT);
      }
    }
  }

  /**
   * On SIGTERM (after the preStop hook, when there is one) a process drains and then waits for calls in
   * flight; Kubernetes must give it longer than all of that before it kills it.
   */
  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void terminationGrace_exceedsPreStop_drain_andGrace(String overlay) {
    for (String name : PROCESSES) {
      Map<String, String> shutdown = new HashMap<>(env(overlay, name));
      shutdown.keySet().removeIf(variable -> !variable.startsWith("SHUTDOWN_"));
      Duration drainAndGrace;
      if (name.equals("gateway")) {
        shutdown.put("AUTH_MODE", "none");
        GatewayConfig config = GatewayConfig.fromEnvironment(shutdown);
        drainAndGrace = config.shutdownDrain().plus(config.shutdownGrace());
      } else {
        StoreServiceConfig config = StoreServiceConfig.fromEnvironment(name, 1, 1, shutdown);
        drainAndGrace = config.shutdownDrain().plus(config.shutdownGrace());
      }
      Duration preStop = Duration.ZERO;
      Container container = container(overlay, name);
      if (container.getLifecycle() != null && container.getLifecycle().getPreStop() != null) {
        List<String> command = container.getLifecycle().getPreStop().getExec().getCommand();
        assertThat(command).hasSize(2).first().isEqualTo("sleep");
        preStop = Duration.ofSeconds(Long.parseLong(command.get(1)));
      }
      Long period = pod(overlay, name).getTerminationGracePeriodSeconds();
      assertThat(period).as(overlay + " " + name + " terminationGracePeriodSeconds (the default is 30 s)").isNotNull();
      assertThat(Duration.ofSeconds(period)).as(overlay + " " + name).isGreaterThan(preStop.plus(drainAndGrace));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void everyContainer_runsAsNonRoot_readOnly_withoutPrivileges_withATmpVolume(String overlay) {
    Map<String, PodSpec> pods = podTemplates(overlay);
    assertThat(pods).containsKeys(AUDITS.keySet().toArray(String[]::new)).containsKey(PUSHGATEWAY);
    for (var entry : pods.entrySet()) {
      String name = overlay + " " + entry.getKey();
      PodSpec pod = entry.getValue();
      assertThat(pod.getSecurityContext().getRunAsNonRoot()).as(name + " runAsNonRoot").isTrue();
      assertThat(pod.getAutomountServiceAccountToken()).as(name + " automountServiceAccountToken").isFalse();
      Set<String> emptyDirs = new HashSet<>();
      for (Volume volume : pod.getVolumes()) {
        if (volume.getEmptyDir() != null) {
          emptyDirs.add(volume.getName());
        }
      }
      for (Container container : pod.getContainers()) {
        assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).as(name + " allowPrivilegeEscalation").isFalse();
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).as(name + " readOnlyRootFilesystem").isTrue();
        assertThat(container.getSecurityContext().getCapabilities().getDrop()).as(name + " capabilities").containsExactly("ALL");
        assertThat(container.getSecurityContext().getCapabilities().getAdd()).as(name + " capabilities added").isNullOrEmpty();
        if (entry.getKey().equals(PUSHGATEWAY)) {
          // A Go binary needs no /tmp; what it writes is its persistence file, on a volume of the pod's.
          String file = container.getArgs().stream().filter(arg -> arg.startsWith("--persistence.file="))
              .findFirst().orElseThrow().substring("--persistence.file=".length());
          assertThat(container.getVolumeMounts()).as(name + ": the persistence file on an emptyDir")
              .anyMatch(mount -> Path.of(file).getParent().equals(Path.of(mount.getMountPath()))
                  && emptyDirs.contains(mount.getName()) && !Boolean.TRUE.equals(mount.getReadOnly()));
          continue;
        }
        assertThat(container.getVolumeMounts()).as(name + ": a writable /tmp on a read-only root")
            .anyMatch(mount -> mount.getMountPath().equals("/tmp") && emptyDirs.contains(mount.getName()));
      }
    }
  }

  /** The probes and the security context name the image's jar and user, as the Dockerfile makes them. */
  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void pods_runTheImagesUser_andProbesTheImagesJar(String overlay) throws IOException {
    String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
    for (String name : PROCESSES) {
      Long user = pod(overlay, name).getSecurityContext().getRunAsUser();
      assertThat(dockerfile).contains("USER " + user, "--uid " + user);
      Container container = container(overlay, name);
      for (Probe probe : new Probe[] {container.getStartupProbe(), container.getReadinessProbe(), container.getLivenessProbe()}) {
        if (probe.getExec() != null) {
          String jar = probe.getExec().getCommand().get(probe.getExec().getCommand().indexOf("-cp") + 1);
          assertThat(dockerfile).contains("\"-jar\", \"" + jar + "\"]");
        }
      }
    }
    // The audits run the image's entrypoint (java -jar the jar) with their arguments, as the image's user.
    for (String audit : AUDITS.keySet()) {
      Long user = auditPod(overlay, audit).getSecurityContext().getRunAsUser();
      assertThat(dockerfile).contains("USER " + user, "--uid " + user);
      assertThat(auditContainer(overlay, audit).getCommand()).as(overlay + " " + audit + ": the image's entrypoint").isNullOrEmpty();
      assertThat(dockerfile).contains("ENTRYPOINT [\"java\", ");
    }
  }

  /**
   * Every JVM of the images starts from the image's AOT cache: the processes and the audits
   * keep the image's entrypoint, which maps it (ClassDataArchiveTest checks the Dockerfile), and no probe starts
   * a JVM of its own (kubelet's gRPC probe asks the health-only port). No JVM option turns it off. A flag dropped here would go unnoticed
   * otherwise: the JVM starts without the cache too, only slower.
   */
  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void everyJvmOfTheImages_startsFromTheImagesCache(String overlay) throws IOException {
    for (String name : PROCESSES) {
      Container container = container(overlay, name);
      assertThat(container.getCommand()).as(overlay + " " + name + ": the image's entrypoint, which maps the cache")
          .isNullOrEmpty();
      assertThat(env(overlay, name).get(JVM_OPTIONS)).as(overlay + " " + name + " " + JVM_OPTIONS)
          .doesNotContain(ClassDataArchiveTest.CACHE_OPTIONS);
      for (Probe probe : new Probe[] {container.getStartupProbe(), container.getReadinessProbe(), container.getLivenessProbe()}) {
        assertThat(probe.getExec()).as(overlay + " " + name + ": a probe that starts a JVM").isNull();
      }
    }
    for (String audit : AUDITS.keySet()) {
      assertThat(auditContainer(overlay, audit).getCommand()).as(overlay + " " + audit).isNullOrEmpty();
      assertThat(literalEnv(overlay + " " + audit, auditContainer(overlay, audit)).get(JVM_OPTIONS))
          .as(overlay + " " + audit + " " + JVM_OPTIONS).doesNotContain(ClassDataArchiveTest.CACHE_OPTIONS);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void backends_haveHeadlessServices_andTheGatewayResolvesThem(String overlay) {
    Map<String, String> gateway = env(overlay, "gateway");
    for (String backend : BACKENDS) {
      Service headless = one(overlay, Service.class, backend + "-headless");
      assertThat(headless.getSpec().getClusterIP()).as(backend + " headless").isEqualTo("None");
      assertThat(selects(headless.getSpec().getSelector(), podLabels(overlay, backend))).isTrue();
      ServicePort grpc = headless.getSpec().getPorts().stream().filter(p -> p.getName().equals("grpc")).findFirst().orElseThrow();
      assertThat(grpc.getPort()).isEqualTo(defaultGrpcPort(backend));
      assertThat(grpc.getTargetPort()).isEqualTo(new IntOrString("grpc"));
      String variable = backend.equals("inventory-service") ? "INVENTORY_ADDRESSES" : "ORDER_ADDRESSES";
      assertThat(gateway).containsEntry(variable, "dns:///" + headless.getMetadata().getName() + ":" + grpc.getPort());
    }
    Service clients = one(overlay, Service.class, "gateway");
    assertThat(selects(clients.getSpec().getSelector(), podLabels(overlay, "gateway"))).isTrue();
    assertThat(clients.getSpec().getPorts()).anyMatch(p -> p.getName().equals("grpc") && p.getPort() == GatewayConfig.DEFAULT_GRPC_PORT);
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void networkPolicies_denyByDefault_andAdmitOnlyTheCallsTheSystemMakes(String overlay) {
    NetworkPolicy deny = one(overlay, NetworkPolicy.class, "default-deny");
    assertThat(deny.getSpec().getPodSelector().getMatchLabels()).isNullOrEmpty();
    assertThat(deny.getSpec().getPodSelector().getMatchExpressions()).isNullOrEmpty();
    assertThat(deny.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");
    assertThat(deny.getSpec().getIngress()).isNullOrEmpty();
    assertThat(deny.getSpec().getEgress()).isNullOrEmpty();
    assertThat(one(overlay, NetworkPolicy.class, "allow-dns").getSpec().getEgress()).singleElement()
        .satisfies(rule -> assertThat(rule.getPorts()).extracting(p -> p.getPort().getIntVal()).containsOnly(53));

    for (String backend : BACKENDS) {
      NetworkPolicy policy = one(overlay, NetworkPolicy.class, backend);
      // gRPC only from the gateway (and, to the inventory's reservations, the order-service), metrics only
      // from Prometheus.
      List<String> callers = backend.equals("inventory-service") ? List.of("gateway", "order-service") : List.of("gateway");
      assertThat(ingressFrom(policy, defaultGrpcPort(backend)))
          .extracting(peer -> peer.getPodSelector().getMatchLabels().get("app.kubernetes.io/name"))
          .containsExactlyInAnyOrderElementsOf(callers);
      assertThat(ingressFrom(policy, defaultMetricsPort(backend))).singleElement()
          .satisfies(peer -> assertThat(peer.getPodSelector().getMatchLabels()).isEqualTo(Map.of("app.kubernetes.io/name", "prometheus")));
      assertThat(policy.getSpec().getIngress()).allSatisfy(rule -> assertThat(rule.getFrom()).isNotEmpty());
      // DynamoDB over HTTPS; nothing else out but DNS (allow-dns), what an overlay adds for its store, and
      // the order-service's calls to the inventory's gRPC port.
      List<Integer> out = backend.equals("order-service") ? List.of(443, InventoryMain.DEFAULT_GRPC_PORT) : List.of(443);
      assertThat(policy.getSpec().getEgress()).flatExtracting(rule -> rule.getPorts().stream()
          .map(p -> p.getPort().getIntVal()).toList()).containsExactlyInAnyOrderElementsOf(out);
      if (backend.equals("order-service")) {
        assertThat(policy.getSpec().getEgress()).anyMatch(rule -> rule.getTo() != null && rule.getTo().stream()
            .anyMatch(peer -> selects(peer.getPodSelector().getMatchLabels(), podLabels(overlay, "inventory-service")))
            && rule.getPorts().stream().allMatch(p -> p.getPort().getIntVal() == InventoryMain.DEFAULT_GRPC_PORT));
      }
      // The gateway may call it, on its gRPC port.
      assertThat(one(overlay, NetworkPolicy.class, "gateway").getSpec().getEgress()).anyMatch(rule ->
          rule.getTo().stream().anyMatch(peer -> selects(peer.getPodSelector().getMatchLabels(), podLabels(overlay, backend)))
              && rule.getPorts().stream().anyMatch(p -> p.getPort().getIntVal() == defaultGrpcPort(backend)));
    }
    NetworkPolicy gateway = one(overlay, NetworkPolicy.class, "gateway");
    assertThat(gateway.getSpec().getIngress()).anyMatch(rule -> rule.getPorts().stream()
        .anyMatch(p -> p.getPort().getIntVal() == GatewayConfig.DEFAULT_GRPC_PORT));
    assertThat(ingressFrom(gateway, GatewayConfig.DEFAULT_METRICS_PORT)).singleElement()
        .satisfies(peer -> assertThat(peer.getPodSelector().getMatchLabels()).isEqualTo(Map.of("app.kubernetes.io/name", "prometheus")));

    // The audits: nothing in; out, DynamoDB's HTTPS and the Pushgateway's port on its pods, nothing else.
    int pushgatewayPort = pushgatewayPort(overlay);
    Map<String, String> pushgatewayPods = podLabels(overlay, PUSHGATEWAY);
    for (String audit : AUDITS.keySet()) {
      Map<String, String> labels = job(overlay, audit).getTemplate().getMetadata().getLabels();
      List<NetworkPolicy> policies = all(overlay, NetworkPolicy.class).stream()
          .filter(p -> selects(p.getSpec().getPodSelector(), labels)).toList();
      assertThat(policies).extracting(p -> p.getMetadata().getName()).as(overlay + " " + audit + " policies")
          .contains("default-deny", "allow-dns", AUDIT_ACCOUNT);
      assertThat(policies).as(overlay + " " + audit + ": nothing calls an audit")
          .allSatisfy(p -> assertThat(p.getSpec().getIngress()).isNullOrEmpty());
      NetworkPolicy own = one(overlay, NetworkPolicy.class, AUDIT_ACCOUNT);
      assertThat(own.getSpec().getPolicyTypes()).contains("Egress");
      assertThat(own.getSpec().getEgress()).hasSize(2).allSatisfy(rule -> assertThat(rule.getPorts()).singleElement()
          .satisfies(port -> assertThat(port.getPort().getIntVal()).isIn(443, pushgatewayPort)));
      assertThat(own.getSpec().getEgress()).anyMatch(rule -> rule.getPorts().get(0).getPort().getIntVal() == pushgatewayPort
          && rule.getTo().size() == 1 && rule.getTo().get(0).getNamespaceSelector() == null
          && Map.of("app.kubernetes.io/name", PUSHGATEWAY).equals(rule.getTo().get(0).getPodSelector().getMatchLabels())
          && selects(rule.getTo().get(0).getPodSelector(), pushgatewayPods));
    }
    // The Pushgateway: pushes from the audits' pods only, scrapes from Prometheus's; it calls nothing.
    NetworkPolicy pushgateway = one(overlay, NetworkPolicy.class, PUSHGATEWAY);
    assertThat(selects(pushgateway.getSpec().getPodSelector(), pushgatewayPods)).isTrue();
    assertThat(pushgateway.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");
    assertThat(pushgateway.getSpec().getEgress()).isNullOrEmpty();
    assertThat(pushgateway.getSpec().getIngress()).allSatisfy(rule -> assertThat(rule.getFrom()).isNotEmpty());
    assertThat(ingressFrom(pushgateway, pushgatewayPort)).hasSize(2).anySatisfy(peer -> {
      assertThat(peer.getPodSelector().getMatchLabels()).isEqualTo(Map.of("app.kubernetes.io/name", AUDIT_ACCOUNT));
      assertThat(peer.getNamespaceSelector()).as("the audits of this namespace only").isNull();
    }).anySatisfy(peer ->
        assertThat(peer.getPodSelector().getMatchLabels()).isEqualTo(Map.of("app.kubernetes.io/name", "prometheus")));
    for (String audit : AUDITS.keySet()) {
      assertThat(job(overlay, audit).getTemplate().getMetadata().getLabels()).containsEntry("app.kubernetes.io/name", AUDIT_ACCOUNT);
    }
  }

  /** The port of the Pushgateway's Service, which must reach its container's port. */
  private static int pushgatewayPort(String overlay) {
    Service service = one(overlay, Service.class, PUSHGATEWAY);
    assertThat(selects(service.getSpec().getSelector(), podLabels(overlay, PUSHGATEWAY))).isTrue();
    ServicePort port = service.getSpec().getPorts().stream().filter(p -> p.getName().equals("http")).findFirst().orElseThrow();
    Container container = container(overlay, PUSHGATEWAY);
    assertThat(container.getPorts()).anyMatch(p -> new IntOrString(p.getName()).equals(port.getTargetPort())
        && p.getContainerPort().equals(port.getPort()));
    return port.getPort();
  }

  /** The peers of the ingress rules that open {@code port}. */
  private static List<NetworkPolicyPeer> ingressFrom(NetworkPolicy policy, int port) {
    List<NetworkPolicyPeer> peers = new ArrayList<>();
    for (NetworkPolicyIngressRule rule : policy.getSpec().getIngress()) {
      for (NetworkPolicyPort p : rule.getPorts()) {
        if (p.getPort().getIntVal() == port) {
          peers.addAll(rule.getFrom());
        }
      }
    }
    return peers;
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  @SuppressWarnings("unchecked")
  void configMaps_areTheRepositorysFiles_byteForByte(String overlay) throws IOException {
    ConfigMap dashboard = one(overlay, ConfigMap.class, "grafana-dashboard-warehouse");
    assertThat(dashboard.getData()).containsOnlyKeys("warehouse.json");
    assertThat(dashboard.getData().get("warehouse.json")).isEqualTo(Files.readString(Repo.DASHBOARD, StandardCharsets.UTF_8));
    assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");

    ConfigMap prometheus = one(overlay, ConfigMap.class, "prometheus-warehouse");
    assertThat(prometheus.getData()).containsOnlyKeys("prometheus.yml", "alerts.yml");
    assertThat(prometheus.getData().get("alerts.yml")).isEqualTo(Files.readString(ROOT.resolve("deploy/prometheus/alerts.yml")));
    assertThat(prometheus.getData().get("prometheus.yml")).isEqualTo(Files.readString(ROOT.resolve("deploy/prometheus/kubernetes.yml")));

    // One job per process, named as in compose (the alerts select on job), keeping that process's pods on
    // the container port the Deployment names "metrics"; and one for the Pushgateway, on its one port,
    // honouring the pushed labels (job="warehouse_audit", audit) that the audit alerts select on.
    Map<String, Object> config = new Yaml().load(prometheus.getData().get("prometheus.yml"));
    assertThat((List<String>) config.get("rule_files")).containsExactly("alerts.yml");
    Map<String, List<Map<String, Object>>> relabels = new HashMap<>();
    Map<String, Object> honorLabels = new HashMap<>();
    for (Map<String, Object> job : (List<Map<String, Object>>) config.get("scrape_configs")) {
      relabels.put((String) job.get("job_name"), (List<Map<String, Object>>) job.get("relabel_configs"));
      honorLabels.put((String) job.get("job_name"), job.getOrDefault("honor_labels", false));
    }
    // The front door's black-box probe: the gateway's Service on its client port, through the exporter,
    // with the TLS module (deploy/blackbox, a ConfigMap of its own, byte for byte).
    List<Map<String, Object>> probe = relabels.remove(PROBE);
    assertThat(probe).as("the %s job", PROBE).isNotNull()
        .anyMatch(rule -> "__param_target".equals(rule.get("target_label")))
        .anyMatch(rule -> "__address__".equals(rule.get("target_label")));
    Map<String, Object> probeJob = ((List<Map<String, Object>>) config.get("scrape_configs")).stream()
        .filter(job -> PROBE.equals(job.get("job_name"))).findFirst().orElseThrow();
    assertThat(probeJob).containsEntry("metrics_path", "/probe")
        .containsEntry("params", Map.of("module", List.of("grpc_health_tls")));
    int gatewayPort = one(overlay, Service.class, "gateway").getSpec().getPorts().stream()
        .filter(port -> port.getName().equals("grpc")).findFirst().orElseThrow().getPort();
    assertThat(probeJob.toString()).contains("gateway:" + gatewayPort);
    ConfigMap blackbox = one(overlay, ConfigMap.class, "blackbox-warehouse");
    assertThat(blackbox.getData()).containsOnly(Map.entry("blackbox.yml",
        Files.readString(ROOT.resolve("deploy/blackbox/blackbox.yml"))));
    List<String> jobs = new ArrayList<>(PROCESSES);
    jobs.add(PUSHGATEWAY);
    assertThat(relabels).containsOnlyKeys(jobs);
    relabels.forEach((job, rules) -> {
      String port = job.equals(PUSHGATEWAY) ? "http" : "metrics";
      assertThat(rules).anyMatch(rule -> "keep".equals(rule.get("action")) && job.equals(rule.get("regex"))
          && List.of("__meta_kubernetes_pod_label_app_kubernetes_io_name").equals(rule.get("source_labels")));
      assertThat(rules).anyMatch(rule -> "keep".equals(rule.get("action")) && port.equals(rule.get("regex"))
          && List.of("__meta_kubernetes_pod_container_port_name").equals(rule.get("source_labels")));
      assertThat(podLabels(overlay, job)).containsEntry("app.kubernetes.io/name", job);
      assertThat(container(overlay, job).getPorts()).as(overlay + " " + job + " port " + port).anyMatch(p -> p.getName().equals(port));
      assertThat(honorLabels.get(job)).as(job + " honor_labels").isEqualTo(job.equals(PUSHGATEWAY));
    });
  }

  /** The Kubernetes configuration loads in Prometheus, with the alert rules beside it as the ConfigMap mounts them. */
  @Test
  void prometheusConfigMap_passesPromtool(@TempDir Path dir) throws Exception {
    String promtool = AlertRulesTest.promtoolBinary();
    assertThat(promtool).as(
        "promtool is missing (a missing tool fails, never skips): ./test.sh installs it (Debian's prometheus package), or set PROMTOOL_BIN").isNotNull();
    Map<String, String> files = one("production", ConfigMap.class, "prometheus-warehouse").getData();
    files.forEach((name, content) -> write(dir.resolve(name), content));
    String output = checkConfig(promtool, dir);
    if (output.contains("field kubernetes_sd_configs not found")) {
      // Debian's build leaves Kubernetes discovery out. Check the rest (globals, relabelling, the rule
      // files) with the discovery swapped for an empty static list.
      String config = files.get("prometheus.yml");
      String swapped = config.replaceAll("(?m)^    kubernetes_sd_configs:\n(      .*\n)+", "    static_configs: []\n");
      assertThat(swapped).doesNotContain("kubernetes_sd_configs").doesNotContain("own_namespace");
      write(dir.resolve("prometheus.yml"), swapped);
      output = checkConfig(promtool, dir);
    }
    assertThat(output).contains("SUCCESS: 1 rule files found");
  }

  private static String checkConfig(String promtool, Path dir) throws Exception {
    Commands.Run run = Commands.run(dir, Duration.ofSeconds(60), List.of(promtool, "check", "config", "prometheus.yml"));
    String output = run.printed();
    assertThat(run.exitValue() == 0 || output.contains("field kubernetes_sd_configs not found"))
        .as("promtool check config:%n%s", output).isTrue();
    return output;
  }

  private static void write(Path file, String content) {
    try {
      Files.writeString(file, content);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Every Secret and ConfigMap a pod mounts or reads is rendered (local), or is one of those the
   * production overlay tells the operator to create; every file variable names a file of a mounted volume.
   */
  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void everyFileAndSecret_aProcessReads_isMounted(String overlay) {
    Set<String> missing = new HashSet<>();
    for (String name : PROCESSES) {
      PodSpec pod = pod(overlay, name);
      Map<String, String> mounts = new HashMap<>();
      for (VolumeMount mount : container(overlay, name).getVolumeMounts()) {
        mounts.put(mount.getMountPath(), mount.getName());
      }
      env(overlay, name).forEach((variable, value) -> {
        if (variable.endsWith("_FILE")) {
          Path file = Path.of(value);
          assertThat(mounts).as(overlay + " " + name + " " + variable).containsKey(file.getParent().toString());
          String volume = mounts.get(file.getParent().toString());
          Volume source = pod.getVolumes().stream().filter(v -> v.getName().equals(volume)).findFirst().orElseThrow();
          String key = file.getFileName().toString();
          if (source.getSecret() != null) {
            generated(overlay, Secret.class, source.getSecret().getSecretName()).ifPresentOrElse(
                secret -> assertThat(secret.getData()).as(overlay + " " + name + " " + variable).containsKey(key),
                () -> missing.add(source.getSecret().getSecretName()));
          } else {
            generated(overlay, ConfigMap.class, source.getConfigMap().getName()).ifPresentOrElse(
                map -> assertThat(map.getData()).as(overlay + " " + name + " " + variable).containsKey(key),
                () -> missing.add(source.getConfigMap().getName()));
          }
        }
      });
      for (EnvVar variable : container(overlay, name).getEnv()) {
        if (variable.getValueFrom() != null) {
          var ref = variable.getValueFrom().getSecretKeyRef();
          if (variable.getName().equals("PAGE_TOKEN_ACCEPTED_KEYS")) {
            // Set only during a key rotation (docs/operations/rotation.md); absent, the process opens one key's tokens.
            assertThat(ref.getOptional()).as(name + " " + variable.getName() + " optional").isTrue();
            continue;
          }
          assertThat(ref.getOptional()).as(name + " " + variable.getName() + " required").isNotEqualTo(Boolean.TRUE);
          generated(overlay, Secret.class, ref.getName()).ifPresentOrElse(
              secret -> assertThat(secret.getData()).containsKey(ref.getKey()), () -> missing.add(ref.getName()));
        }
      }
    }
    if (overlay.equals("local")) {
      assertThat(missing).as("local: referenced but not rendered").isEmpty();
    } else {
      assertThat(missing).as("production: created by the operator").isEqualTo(SUPPLIED_BY_OPERATOR);
    }
    // The backends share one page-token key: a token sealed by one instance must open on another.
    for (String backend : BACKENDS) {
      assertThat(env(overlay, backend)).containsEntry("PAGE_TOKEN_KEY", "valueFrom")
          .containsEntry("PAGE_TOKEN_ACCEPTED_KEYS", "valueFrom");
    }
  }

  /**
   * The local overlay's credentials, as the pods would see them: each process's TLS settings load from
   * its mounted Secret and present its own identity, the services admit only the gateway's, the gateway
   * checks exactly theirs, and the gateway's policy and JWKS are the development ones.
   */
  @Test
  void local_credentialsLoad_fromTheMountedSecrets(@TempDir Path mounted) throws Exception {
    Map<String, String> identities = new HashMap<>();
    for (String name : PROCESSES) {
      PodSpec pod = pod("local", name);
      Map<String, String> tls = new HashMap<>();
      for (VolumeMount mount : container("local", name).getVolumeMounts()) {
        Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
        Path dir = mounted.resolve(name + mount.getMountPath());
        Files.createDirectories(dir);
        if (volume.getSecret() != null) {
          for (var entry : one("local", Secret.class, volume.getSecret().getSecretName()).getData().entrySet()) {
            Files.write(dir.resolve(entry.getKey()), Base64.getMimeDecoder().decode(entry.getValue()));
          }
        } else if (volume.getConfigMap() != null) {
          for (var entry : one("local", ConfigMap.class, volume.getConfigMap().getName()).getData().entrySet()) {
            Files.writeString(dir.resolve(entry.getKey()), entry.getValue());
          }
        }
      }
      env("local", name).forEach((variable, value) -> {
        if (variable.startsWith("TLS_") || variable.startsWith("GRPC_TLS_") || variable.startsWith("BACKEND_")) {
          tls.put(variable, value.startsWith("/") ? mounted.resolve(name + value).toString() : value);
        }
      });
      try (TransportSecurity loaded = TransportSecurity.load(TlsConfig.fromEnvironment(tls))) {
        identities.put(name, PeerIdentity.of(loaded.certificate().orElseThrow()).orElseThrow().uri());
      }
      assertThat(identities.get(name)).isEqualTo(LocalCa.spiffeId(name));
    }
    for (String backend : BACKENDS) {
      assertThat(env("local", backend)).containsEntry("GRPC_TLS_MODE", "mtls")
          .containsEntry("TLS_TRUSTED_PEERS", identities.get("gateway"));
    }
    // The order-service calls the inventory's reservations itself, over mutual TLS, expecting its identity.
    assertThat(env("local", "order-service")).containsEntry("INVENTORY_TLS_MODE", "mtls")
        .containsEntry("INVENTORY_TRUSTED_PEERS", identities.get("inventory-service"))
        .containsEntry("INVENTORY_ADDRESSES", "dns:///inventory-service-headless:50052");
    // Each of the gateway's backend channels admits its own service's identity only.
    assertThat(env("local", "gateway")).containsEntry("INVENTORY_TRUSTED_PEERS", identities.get("inventory-service"))
        .containsEntry("ORDER_TRUSTED_PEERS", identities.get("order-service")).doesNotContainKey("BACKEND_TRUSTED_PEERS");

    Path gateway = mounted.resolve("gateway");
    Map<String, String> env = env("local", "gateway");
    assertThat(Files.readString(gateway.resolve(env.get("AUTH_POLICY_FILE").substring(1))))
        .isEqualTo(Files.readString(ROOT.resolve("deploy/auth/policy.dev.yaml")));
    assertThat(Files.readString(gateway.resolve(env.get("AUTH_JWKS_FILE").substring(1)))).contains("\"keys\"");
    assertThat(env).containsEntry("AUTH_MODE", "jwt").containsEntry("AUTH_JWT_ISSUER", DevTokens.ISSUER)
        .containsEntry("AUTH_JWT_AUDIENCE", DevTokens.AUDIENCE);
  }

  @Test
  void local_runsAgainstMoto_throughTheLauncher() throws IOException {
    for (String backend : BACKENDS) {
      assertThat(env("local", backend)).containsEntry("DYNAMODB_ENDPOINT", "http://moto:5000")
          .containsEntry("TABLE_AUTO_CREATE", "true");
    }
    Service moto = one("local", Service.class, "moto");
    assertThat(moto.getSpec().getPorts()).singleElement().satisfies(p -> assertThat(p.getPort()).isEqualTo(5000));
    assertThat(selects(moto.getSpec().getSelector(), podLabels("local", "moto"))).isTrue();
    Container container = container("local", "moto");
    assertThat(container.getCommand()).containsSubsequence("-m", "strict_moto", "--port", "5000");
    // The ConfigMap is the package's directory, under the working directory python -m imports from.
    Volume launcher = pod("local", "moto").getVolumes().stream().filter(v -> v.getConfigMap() != null)
        .findFirst().orElseThrow();
    assertThat(container.getVolumeMounts()).anySatisfy(m -> assertThat(List.of(m.getName(), m.getMountPath()))
        .containsExactly(launcher.getName(), container.getWorkingDir() + "/strict_moto"));
    Map<String, String> modules = new HashMap<>();
    try (Stream<Path> files = Files.list(ROOT.resolve("tools/moto/strict_moto"))) {
      for (Path module : files.filter(f -> f.toString().endsWith(".py")).toList()) {
        modules.put(module.getFileName().toString(), Files.readString(module));
      }
    }
    assertThat(one("local", ConfigMap.class, launcher.getConfigMap().getName()).getData()).isEqualTo(modules);
    // The credentials come from an ignored directory: none is committed.
    assertThat(Files.readString(ROOT.resolve("deploy/k8s/overlays/local/.gitignore"))).contains("/secrets/");
    assertThat(Files.readString(ROOT.resolve("deploy/k8s/overlays/local/make-secrets.sh")))
        .contains("certs \"$out/certs\"", "dev-tokens \"$out/auth\"", "page-token-key.env");
    for (String name : PROCESSES) {
      assertThat(container("local", name).getImage()).isEqualTo("warehouse/" + name + ":local");
    }
    // The audits read moto too, through its policy.
    for (String audit : AUDITS.keySet()) {
      assertThat(literalEnv(audit, auditContainer("local", audit))).containsEntry("DYNAMODB_ENDPOINT", "http://moto:5000");
      Map<String, String> labels = job("local", audit).getTemplate().getMetadata().getLabels();
      assertThat(one("local", NetworkPolicy.class, "moto").getSpec().getIngress())
          .anyMatch(rule -> rule.getFrom().stream().anyMatch(peer -> selects(peer.getPodSelector(), labels)));
      assertThat(selects(one("local", NetworkPolicy.class, "services-to-moto").getSpec().getPodSelector(), labels)).isTrue();
    }
  }

  @Test
  void production_usesRealAws_tlsForClients_andTaggedImages() {
    for (String backend : BACKENDS) {
      assertThat(env("production", backend)).doesNotContainKey("DYNAMODB_ENDPOINT").doesNotContainKey("TABLE_AUTO_CREATE");
    }
    assertThat(env("production", "gateway")).containsEntry("GRPC_TLS_MODE", "tls");
    for (String name : PROCESSES) {
      String image = container("production", name).getImage();
      assertThat(image).startsWith("warehouse/" + name + ":").doesNotEndWith(":local").doesNotEndWith(":latest");
    }
    List<String> deployments = new ArrayList<>(PROCESSES);
    deployments.add(PUSHGATEWAY);
    assertThat(all("production", Deployment.class)).extracting(d -> d.getMetadata().getName())
        .containsExactlyInAnyOrderElementsOf(deployments);
    // The SDK's credentials come from the EKS Pod Identity agent, for the services and the audits alike.
    NetworkPolicy podIdentity = one("production", NetworkPolicy.class, "services-to-pod-identity-agent");
    assertThat(podIdentity.getSpec().getEgress())
        .singleElement().satisfies(rule -> assertThat(rule.getTo()).anyMatch(peer -> peer.getIpBlock() != null
            && peer.getIpBlock().getCidr().equals("169.254.170.23/32")));
    for (String backend : BACKENDS) {
      assertThat(selects(podIdentity.getSpec().getPodSelector(), podLabels("production", backend))).as(backend).isTrue();
    }
    for (String audit : AUDITS.keySet()) {
      assertThat(literalEnv(audit, auditContainer("production", audit))).doesNotContainKey("DYNAMODB_ENDPOINT");
      assertThat(selects(podIdentity.getSpec().getPodSelector(), job("production", audit).getTemplate().getMetadata().getLabels()))
          .as(audit).isTrue();
    }
  }

  /**
   * Each audit is a daily CronJob that runs its service's jar with {@code audit}, on the service's image
   * and table, under the audits' own ServiceAccount, and pushes its outcome to the Pushgateway's Service:
   * one run at a time, few retries, a deadline, its pods kept for their logs.
   */
  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  void audits_runDaily_asTheirServicesJar_underTheAuditAccount_andPushToThePushgateway(String overlay) throws IOException {
    ServiceAccount account = one(overlay, ServiceAccount.class, AUDIT_ACCOUNT);
    assertThat(account.getAutomountServiceAccountToken()).isFalse();
    assertThat(AUDIT_ACCOUNT).isNotIn(PROCESSES); // Pod Identity binds one role per ServiceAccount
    String pushgateway = "http://" + one(overlay, Service.class, PUSHGATEWAY).getMetadata().getName() + ":" + pushgatewayPort(overlay);
    // AuditNotRunning fires when no run has ended for N days; the schedule must end one well within that.
    Matcher rule = NOT_RUNNING_AFTER.matcher(alertExpression("AuditNotRunning"));
    assertThat(rule.find()).as("AuditNotRunning's threshold, in days").isTrue();
    Duration notRunningAfter = Duration.ofDays(Long.parseLong(rule.group(1)));
    Set<Integer> minutes = new HashSet<>();

    for (var entry : AUDITS.entrySet()) {
      String audit = entry.getKey();
      String service = entry.getValue();
      String what = overlay + " " + audit;
      CronJob cron = cronJob(overlay, audit);
      Matcher daily = DAILY.matcher(cron.getSpec().getSchedule());
      assertThat(daily.matches()).as(what + " schedule " + cron.getSpec().getSchedule() + ": once a day").isTrue();
      assertThat(Integer.parseInt(daily.group(1))).as(what + " minute").isBetween(0, 59);
      assertThat(Integer.parseInt(daily.group(2))).as(what + " hour").isBetween(0, 23);
      assertThat(minutes.add(Integer.parseInt(daily.group(2)) * 60 + Integer.parseInt(daily.group(1))))
          .as(what + ": not at the same time as the other audit").isTrue();
      assertThat(cron.getSpec().getTimeZone()).as(what + ": the schedule does not follow the controller's zone").isNotBlank();
      assertThat(cron.getSpec().getConcurrencyPolicy()).isEqualTo("Forbid");
      assertThat(cron.getSpec().getSuccessfulJobsHistoryLimit()).isBetween(1, 10);
      assertThat(cron.getSpec().getFailedJobsHistoryLimit()).as(what + ": a failed run's findings are in its log").isBetween(1, 10);

      JobSpec job = job(overlay, audit);
      assertThat(job.getBackoffLimit()).as(what + " backoffLimit").isBetween(0, 2);
      assertThat(job.getActiveDeadlineSeconds()).as(what + " activeDeadlineSeconds").isNotNull().isPositive();
      long startingDeadline = cron.getSpec().getStartingDeadlineSeconds() == null ? 0 : cron.getSpec().getStartingDeadlineSeconds();
      // The latest a run can end after the one before it ended: a day, started late, running to its deadline.
      assertThat(Duration.ofDays(1).plusSeconds(startingDeadline + job.getActiveDeadlineSeconds()))
          .as(what + ": the longest gap between two runs' ends, within AuditNotRunning's threshold").isLessThan(notRunningAfter);
      // Findings (1) and bad arguments (2) are a verdict: retrying would only scan the table again.
      assertThat(job.getPodFailurePolicy().getRules()).anySatisfy(r -> {
        assertThat(r.getAction()).isEqualTo("FailJob");
        assertThat(r.getOnExitCodes().getOperator()).isEqualTo("In");
        assertThat(r.getOnExitCodes().getValues()).containsExactlyInAnyOrder(1, 2);
      });
      // An evicted or preempted pod is not the audit's failure. Every condition pattern names its status, as the
      // API of Kubernetes 1.26-1.28 requires (later ones default it to True).
      assertThat(job.getPodFailurePolicy().getRules()).anySatisfy(r -> {
        assertThat(r.getAction()).isEqualTo("Ignore");
        assertThat(r.getOnPodConditions()).extracting(c -> c.getType() + "=" + c.getStatus())
            .containsExactly("DisruptionTarget=True");
      });
      assertThat(job.getPodFailurePolicy().getRules()).allSatisfy(r -> assertThat(r.getOnPodConditions())
          .allSatisfy(c -> assertThat(c.getStatus()).as(what + ": an onPodConditions pattern's status").isNotBlank()));

      PodSpec pod = auditPod(overlay, audit);
      assertThat(pod.getRestartPolicy()).isEqualTo("Never");
      assertThat(pod.getServiceAccountName()).isEqualTo(AUDIT_ACCOUNT);
      assertThat(pod.getAutomountServiceAccountToken()).isFalse();

      Container container = auditContainer(overlay, audit);
      assertThat(container.getImage()).as(what + ": the service's image").isEqualTo(container(overlay, service).getImage());
      List<String> args = container.getArgs();
      assertThat(args).first().isEqualTo("audit");
      PacedScan.Options.parse(args.subList(1, args.size()).toArray(String[]::new)); // the options the command takes

      // Only variables the audit reads, the table its service uses, and the Pushgateway's Service.
      Map<String, String> env = literalEnv(what, container);
      Set<String> own = new HashSet<>(env.keySet());
      own.remove(JVM_OPTIONS);
      // StoreServiceConfig.variables(), and for the inventory audit its shard count (InventoryMain.variables()).
      assertThat(variablesRead(service)).as(what + " reads").containsAll(own);
      assertThat(env.values()).as(what + ": nothing secret").doesNotContain("valueFrom");
      Map<String, String> serviceEnv = env(overlay, service);
      for (String setting : TABLE_SETTINGS) {
        assertThat(env.get(setting)).as(what + " " + setting + ", as " + service + " has it").isEqualTo(serviceEnv.get(setting));
      }
      assertThat(env).containsEntry("AUDIT_PUSHGATEWAY_URL", pushgateway);
      StoreServiceConfig config = StoreServiceConfig.fromEnvironment(service, defaultGrpcPort(service), defaultMetricsPort(service), env);
      assertThat(config.auditPushgateway()).contains(URI.create(pushgateway));

      // The heap follows the limit as for the services; nothing else runs beside it (no probes).
      assertThat(env.get(JVM_OPTIONS)).contains("-XX:MaxRAMPercentage=").doesNotContain("-Xmx");
      assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
      long limit = Quantity.getAmountInBytes(container.getResources().getLimits().get("memory")).longValueExact();
      Matcher percentage = MAX_RAM_PERCENTAGE.matcher(env.get(JVM_OPTIONS));
      assertThat(percentage.find()).isTrue();
      long heap = (long) (limit * Double.parseDouble(percentage.group(1)) / 100);
      assertThat(heap).as(what + " heap").isGreaterThanOrEqualTo(MEASURED_HEAP);
      assertThat(limit - heap).as(what + " memory beside the heap").isGreaterThanOrEqualTo(NON_HEAP);
    }
  }

  /** The Pushgateway: compose's image, one replica, probed on its own endpoints, scraped as job pushgateway. */
  @ParameterizedTest
  @ValueSource(strings = {"local", "production"})
  @SuppressWarnings("unchecked")
  void pushgateway_isComposesImage_oneReplica_probedOnItsEndpoints(String overlay) throws IOException {
    Map<String, Object> compose = new Yaml().load(Files.readString(ROOT.resolve("docker-compose.yml")));
    Map<String, Object> services = (Map<String, Object>) compose.get("services");
    Container container = container(overlay, PUSHGATEWAY);
    assertThat(container.getImage()).isEqualTo(((Map<String, Object>) services.get(PUSHGATEWAY)).get("image"));
    assertThat(deployment(overlay, PUSHGATEWAY).getSpec().getReplicas()).as("one store").isEqualTo(1);
    assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/-/ready");
    assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/-/healthy");
    assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(container.getResources().getLimits()).containsKey("memory");
    // The audits' alerts select on the pushed job label, which only honor_labels keeps.
    assertThat(alertExpression("MetricsTargetDown")).contains(PUSHGATEWAY);
    assertThat(AuditPushgateway.JOB).isNotEqualTo(PUSHGATEWAY);
  }

  @SuppressWarnings("unchecked")
  private static String alertExpression(String alert) throws IOException {
    Map<String, Object> rules = new Yaml().load(Files.readString(ROOT.resolve("deploy/prometheus/alerts.yml")));
    for (Map<String, Object> group : (List<Map<String, Object>>) rules.get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
        if (alert.equals(rule.get("alert"))) {
          return (String) rule.get("expr");
        }
      }
    }
    throw new AssertionError("no alert " + alert + " in deploy/prometheus/alerts.yml");
  }
}
