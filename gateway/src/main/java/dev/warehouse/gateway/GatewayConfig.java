package dev.warehouse.gateway;

import dev.warehouse.gateway.auth.AuthConfig;
import dev.warehouse.runtime.discovery.BackendAddress;
import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.runtime.env.EnvReader;
import dev.warehouse.runtime.log.Fields;
import dev.warehouse.runtime.process.ProcessSettings;
import dev.warehouse.runtime.tls.ChannelTlsConfig;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.trace.TraceSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The gateway's settings, read once by {@code main} from environment variables.
 *
 * @param inventoryAddresses {@code INVENTORY_ADDRESSES}: the inventory-service instances, each {@code host:port} (one
 *                           instance) or {@code dns:///name:port} (one per address of the name; {@link BackendAddress})
 * @param orderAddresses     {@code ORDER_ADDRESSES}: the order-service instances, likewise
 * @param resolvePeriod      {@code BACKEND_RESOLVE_SECONDS}: how often the backends' names are looked up again, so an
 *                           instance added is used, and one removed dropped, within it
 * @param defaultDeadline    {@code DEFAULT_DEADLINE_MS}: the deadline of a call that arrives without one
 * @param minForwardBudget   {@code MIN_FORWARD_BUDGET_MS}: the least time a caller's deadline must leave for the call
 *                           to be forwarded (less fails at once, DEADLINE_TOO_SHORT); below {@code defaultDeadline}
 * @param circuitOpenFor     {@code CIRCUIT_OPEN_SECONDS}: how long an open circuit fails fast before probing
 * @param shutdownDrain      {@code SHUTDOWN_DRAIN_MS}: how long shutdown keeps serving after health turns
 *                           NOT_SERVING, before it refuses new calls
 * @param shutdownGrace      {@code SHUTDOWN_GRACE_SECONDS}: how long shutdown then waits for in-flight calls
 * @param grpcBindAddress    {@code GRPC_BIND_ADDRESS}: the address the client port listens on; {@code 0.0.0.0}
 *                           (default) is every interface
 * @param metricsBindAddress {@code METRICS_BIND_ADDRESS}: the address the metrics endpoint listens on, likewise
 * @param tls                {@code GRPC_TLS_MODE} and {@code TLS_*}: how the client port is secured, and the
 *                           gateway's own certificate and CA, which its backend channels use too
 * @param backendTls         {@code BACKEND_TLS_MODE}, and per backend {@code INVENTORY_TRUSTED_PEERS} and
 *                           {@code ORDER_TRUSTED_PEERS}: how the calls to each service are secured, and the identities
 *                           its certificates must carry (the inventory channel never accepts the order-service's), by
 *                           backend name ({@link #BACKEND_PREFIXES})
 * @param auth               {@code AUTH_*}: how callers are authenticated and authorized ({@link AuthConfig})
 * @param admission          {@code ADMISSION_*}: the concurrency limit of each backend, shared by its routes
 * @param healthPort         {@code HEALTH_PORT}: a plaintext port serving only {@code grpc.health.v1.Health}, on the
 *                           metrics' interfaces, for kubelet's native gRPC probe when the client port speaks TLS
 * @param tracing            {@code OTEL_*}, {@code TRACE_TRUST_INCOMING}: what becomes of its calls' spans; a
 *                           caller's trace context is not continued unless trusted
 */
public record GatewayConfig(
    int grpcPort,
    int metricsPort,
    List<String> inventoryAddresses,
    List<String> orderAddresses,
    Duration resolvePeriod,
    Duration defaultDeadline,
    Duration minForwardBudget,
    Duration circuitOpenFor,
    Duration shutdownDrain,
    Duration shutdownGrace,
    String grpcBindAddress,
    String metricsBindAddress,
    TlsConfig tls,
    Map<String, ChannelTlsConfig> backendTls,
    AuthConfig auth,
    AdmissionConfig admission,
    Optional<Integer> healthPort,
    TraceSettings tracing) {

  public static final int DEFAULT_GRPC_PORT = 50051;
  public static final int DEFAULT_METRICS_PORT = 9091;
  public static final String DEFAULT_INVENTORY_ADDRESSES = "127.0.0.1:50052";
  public static final String DEFAULT_ORDER_ADDRESSES = "127.0.0.1:50053";
  public static final Duration DEFAULT_RESOLVE_PERIOD = Duration.ofSeconds(10);
  public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(5);
  public static final Duration DEFAULT_MIN_FORWARD_BUDGET = Duration.ofMillis(50);
  public static final Duration DEFAULT_CIRCUIT_OPEN = Duration.ofSeconds(5);
  /** The backends by name (their circuit breakers', their hot keys' {@code service}), with their settings' prefix. */
  public static final Map<String, String> BACKEND_PREFIXES = Map.of("inventory-service", "INVENTORY_", "order-service", "ORDER_");

  public GatewayConfig {
    backendTls = Map.copyOf(backendTls);
  }

  /** How the calls to one backend are secured; plaintext for a backend without settings. */
  public ChannelTlsConfig backendTls(String backend) {
    return backendTls.getOrDefault(backend, ChannelTlsConfig.PLAINTEXT);
  }

  /** Each backend channel's mode and trusted peers, fields of the start-up lines: {@code inventory_tls_mode=... order_...}. */
  public Fields backendTlsFields() {
    Fields fields = new Fields();
    new java.util.TreeMap<>(BACKEND_PREFIXES).forEach((backend, prefix) ->
        fields.addAll(backendTls(backend).fields(prefix.toLowerCase(java.util.Locale.ROOT))));
    return fields;
  }

  /** A plaintext gateway on every interface, calling plaintext backends, without authentication: what tests that build the record mean. */
  public GatewayConfig(int grpcPort, int metricsPort, List<String> inventoryAddresses, List<String> orderAddresses,
      Duration defaultDeadline, Duration minForwardBudget, Duration circuitOpenFor, Duration shutdownDrain,
      Duration shutdownGrace) {
    this(grpcPort, metricsPort, inventoryAddresses, orderAddresses, DEFAULT_RESOLVE_PERIOD, defaultDeadline,
        minForwardBudget, circuitOpenFor, shutdownDrain, shutdownGrace, ProcessSettings.ALL_INTERFACES,
        ProcessSettings.ALL_INTERFACES, TlsConfig.PLAINTEXT, Map.of(), AuthConfig.NONE,
        AdmissionConfig.DEFAULT.withMaxStreams(AdmissionConfig.GATEWAY_MAX_STREAMS), Optional.empty(),
        new TraceSettings(new TraceSettings.Exporting.Off(), false));
  }

  /** The same gateway, tracing as {@code tracing} says. */
  public GatewayConfig withTracing(TraceSettings tracing) {
    return new GatewayConfig(grpcPort, metricsPort, inventoryAddresses, orderAddresses, resolvePeriod, defaultDeadline,
        minForwardBudget, circuitOpenFor, shutdownDrain, shutdownGrace, grpcBindAddress, metricsBindAddress, tls,
        backendTls, auth, admission, healthPort, tracing);
  }

  /** The same gateway with other TLS settings. */
  public GatewayConfig withTls(TlsConfig tls, Map<String, ChannelTlsConfig> backendTls) {
    return new GatewayConfig(grpcPort, metricsPort, inventoryAddresses, orderAddresses, resolvePeriod, defaultDeadline,
        minForwardBudget, circuitOpenFor, shutdownDrain, shutdownGrace, grpcBindAddress, metricsBindAddress, tls,
        backendTls, auth, admission, healthPort, tracing);
  }

  /** The same gateway with other admission settings (its per-backend concurrency limits). */
  public GatewayConfig withAdmission(AdmissionConfig admission) {
    return new GatewayConfig(grpcPort, metricsPort, inventoryAddresses, orderAddresses, resolvePeriod, defaultDeadline,
        minForwardBudget, circuitOpenFor, shutdownDrain, shutdownGrace, grpcBindAddress, metricsBindAddress, tls,
        backendTls, auth, admission, healthPort, tracing);
  }

  /** The same gateway with other authentication settings. */
  public GatewayConfig withAuth(AuthConfig auth) {
    return new GatewayConfig(grpcPort, metricsPort, inventoryAddresses, orderAddresses, resolvePeriod, defaultDeadline,
        minForwardBudget, circuitOpenFor, shutdownDrain, shutdownGrace, grpcBindAddress, metricsBindAddress, tls,
        backendTls, auth, admission, healthPort, tracing);
  }

  /** The same gateway, looking its backends' names up every {@code resolvePeriod}. */
  public GatewayConfig withResolvePeriod(Duration resolvePeriod) {
    return new GatewayConfig(grpcPort, metricsPort, inventoryAddresses, orderAddresses, resolvePeriod, defaultDeadline,
        minForwardBudget, circuitOpenFor, shutdownDrain, shutdownGrace, grpcBindAddress, metricsBindAddress, tls,
        backendTls, auth, admission, healthPort, tracing);
  }

  public static GatewayConfig fromEnvironment(Map<String, String> env) {
    EnvReader reader = new EnvReader(env);
    GatewayConfig config = read(reader);
    reader.throwIfProblems();
    return config;
  }

  /** The environment variables the gateway reads. */
  public static List<String> variables() {
    EnvReader reader = new EnvReader(Map.of());
    read(reader);
    return reader.names();
  }

  private static GatewayConfig read(EnvReader reader) {
    TlsConfig tls = TlsConfig.read(reader);
    GatewayConfig config = new GatewayConfig(
        reader.port("GRPC_PORT", DEFAULT_GRPC_PORT),
        reader.port("METRICS_PORT", DEFAULT_METRICS_PORT),
        BackendAddress.read(reader, "INVENTORY_ADDRESSES", DEFAULT_INVENTORY_ADDRESSES),
        BackendAddress.read(reader, "ORDER_ADDRESSES", DEFAULT_ORDER_ADDRESSES),
        Duration.ofSeconds(reader.positiveLong("BACKEND_RESOLVE_SECONDS", DEFAULT_RESOLVE_PERIOD.getSeconds())),
        Duration.ofMillis(reader.positiveLong("DEFAULT_DEADLINE_MS", DEFAULT_DEADLINE.toMillis())),
        Duration.ofMillis(reader.positiveLong("MIN_FORWARD_BUDGET_MS", DEFAULT_MIN_FORWARD_BUDGET.toMillis())),
        Duration.ofSeconds(reader.positiveLong("CIRCUIT_OPEN_SECONDS", DEFAULT_CIRCUIT_OPEN.getSeconds())),
        Duration.ofMillis(reader.nonNegativeLong("SHUTDOWN_DRAIN_MS", ProcessSettings.DEFAULT_SHUTDOWN_DRAIN.toMillis())),
        Duration.ofSeconds(
            reader.positiveLong("SHUTDOWN_GRACE_SECONDS", ProcessSettings.DEFAULT_SHUTDOWN_GRACE.getSeconds())),
        reader.bindAddress("GRPC_BIND_ADDRESS", ProcessSettings.ALL_INTERFACES),
        reader.bindAddress("METRICS_BIND_ADDRESS", ProcessSettings.ALL_INTERFACES),
        tls,
        readBackendTls(reader, tls),
        AuthConfig.read(reader),
        AdmissionConfig.read(reader, AdmissionConfig.GATEWAY_MAX_STREAMS),
        reader.optionalPort("HEALTH_PORT"),
        // Its callers are not ours: their traceparent starts no trace of ours unless an operator says so.
        TraceSettings.read(reader, false));
    reader.logSettings();
    if (config.minForwardBudget().compareTo(config.defaultDeadline()) >= 0) {
      // A call without a deadline gets the default one: it must be a budget the gateway forwards with.
      reader.problem("MIN_FORWARD_BUDGET_MS (" + config.minForwardBudget().toMillis()
          + ") must be less than DEFAULT_DEADLINE_MS (" + config.defaultDeadline().toMillis() + ")");
    }
    return config;
  }

  /** {@code BACKEND_TLS_MODE} for every backend, and each backend's own {@code <PREFIX>TRUSTED_PEERS}. */
  private static Map<String, ChannelTlsConfig> readBackendTls(EnvReader reader, TlsConfig tls) {
    if (reader.isSet("BACKEND_TRUSTED_PEERS")) {
      reader.problem("BACKEND_TRUSTED_PEERS is replaced by INVENTORY_TRUSTED_PEERS and ORDER_TRUSTED_PEERS, so that each "
          + "backend channel admits its own service's identities only");
    }
    ChannelTlsConfig mode = ChannelTlsConfig.readMode(reader, "BACKEND_TLS_MODE", tls);
    Map<String, ChannelTlsConfig> channels = new java.util.TreeMap<>();
    BACKEND_PREFIXES.forEach((backend, prefix) ->
        channels.put(backend, mode.withServers(reader, prefix + "TRUSTED_PEERS", "BACKEND_TLS_MODE")));
    return channels;
  }

  /** What the process assembly reads: ports, addresses, TLS and the stop. */
  public ProcessSettings process() {
    return new ProcessSettings("gateway", grpcBindAddress, grpcPort, metricsBindAddress, metricsPort, healthPort, tls,
        admission.maxStreams(), shutdownDrain, shutdownGrace, tracing);
  }

  /** The fields of the start-up log line: every setting, no secrets. */
  public Fields fields() {
    return new Fields().add("service", "gateway").add("grpc_port", grpcPort).add("metrics_port", metricsPort)
        .add("health_port", healthPort.map(String::valueOf).orElse("none"))
        .add("inventory_addresses", String.join(",", inventoryAddresses))
        .add("order_addresses", String.join(",", orderAddresses))
        .add("backend_resolve_s", resolvePeriod.getSeconds())
        .add("default_deadline_ms", defaultDeadline.toMillis())
        .add("min_forward_budget_ms", minForwardBudget.toMillis())
        .add("circuit_open_s", circuitOpenFor.getSeconds())
        .add("shutdown_drain_ms", shutdownDrain.toMillis())
        .add("shutdown_grace_s", shutdownGrace.getSeconds())
        .add("grpc_bind_address", grpcBindAddress)
        .add("metrics_bind_address", metricsBindAddress)
        .addAll(tls.fields())
        .addAll(backendTlsFields())
        .addAll(auth.fields())
        .addAll(admission.fields())
        .add("traces_exporter", tracing.exporterName())
        .add("trace_trust_incoming", tracing.trustIncoming());
  }

  /** {@link #fields} as one line, {@code key=value key=value}. */
  public String describe() {
    return fields().toString();
  }
}
