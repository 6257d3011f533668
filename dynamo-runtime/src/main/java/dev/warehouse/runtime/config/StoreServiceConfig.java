package dev.warehouse.runtime.config;

import static dev.warehouse.runtime.process.ProcessSettings.ALL_INTERFACES;
import static dev.warehouse.runtime.process.ProcessSettings.DEFAULT_SHUTDOWN_DRAIN;
import static dev.warehouse.runtime.process.ProcessSettings.DEFAULT_SHUTDOWN_GRACE;

import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.runtime.env.EnvReader;
import dev.warehouse.runtime.log.Fields;
import dev.warehouse.runtime.process.ProcessSettings;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.trace.TraceSettings;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything a service process reads from its environment, read once by {@code main}.
 * No other class reads environment variables; tests build this record directly.
 *
 * @param serviceName      name used in logs and metrics
 * @param grpcPort         port of the gRPC server ({@code GRPC_PORT})
 * @param metricsPort      port of the Prometheus endpoint ({@code METRICS_PORT}); 0 disables it
 * @param dynamoEndpoint   DynamoDB endpoint override ({@code DYNAMODB_ENDPOINT}); empty means real AWS
 * @param region           AWS region ({@code AWS_REGION})
 * @param tableName        the single table ({@code TABLE_NAME})
 * @param createTable      create the table at start-up when it is missing ({@code TABLE_AUTO_CREATE})
 * @param pageTokenKey     AES key sealing page tokens ({@code PAGE_TOKEN_KEY}, base64 of 16 or 32 bytes);
 *                         empty means a random key per process
 * @param dynamoCallTimeout  total time one DynamoDB call may take, retries included ({@code DYNAMODB_CALL_TIMEOUT_MS})
 * @param dynamoIoThreads  I/O threads of the DynamoDB client ({@code DYNAMODB_IO_THREADS}); see {@code DynamoClients}
 * @param shutdownDrain    how long shutdown keeps serving after health turns NOT_SERVING, before it refuses
 *                         new calls ({@code SHUTDOWN_DRAIN_MS}); zero refuses them at once
 * @param shutdownGrace    how long shutdown then waits for in-flight calls ({@code SHUTDOWN_GRACE_SECONDS})
 * @param hotKeyLogShare   the share of its access pattern's requests in the last minute at which a partition key
 *                         is logged as hot ({@code HOT_KEY_LOG_SHARE}), above 0 and at most 1
 * @param grpcBindAddress  the address the gRPC server listens on ({@code GRPC_BIND_ADDRESS}); {@code 0.0.0.0}
 *                         (default) is every interface
 * @param metricsBindAddress the address the metrics endpoint listens on ({@code METRICS_BIND_ADDRESS}), likewise
 * @param tls              how the gRPC port is secured and whom it admits ({@code GRPC_TLS_MODE}, {@code TLS_*})
 * @param admission        the concurrency limit on calls that use the store ({@code ADMISSION_*}); see {@code Admission}
 * @param acceptedPageTokenKeys other AES keys whose page tokens are still opened, never used to seal
 *                         ({@code PAGE_TOKEN_ACCEPTED_KEYS}, comma-separated base64): a rotation's other key
 * @param healthPort       a plaintext port that serves only {@code grpc.health.v1.Health} ({@code HEALTH_PORT}, on
 *                         the metrics' interfaces), for kubelet's native gRPC probe where the gRPC port speaks TLS;
 *                         empty serves none
 * @param auditPushgateway the Prometheus Pushgateway a consistency audit pushes its outcome to
 *                         ({@code AUDIT_PUSHGATEWAY_URL}, e.g. {@code http://pushgateway:9091}); empty pushes nothing
 * @param tracing          what becomes of its calls' spans ({@code OTEL_TRACES_EXPORTER} and the other {@code OTEL_*},
 *                         {@code TRACE_TRUST_INCOMING}): off unless an exporter is named
 */
public record StoreServiceConfig(
    String serviceName,
    int grpcPort,
    int metricsPort,
    Optional<URI> dynamoEndpoint,
    String region,
    String tableName,
    boolean createTable,
    Optional<byte[]> pageTokenKey,
    Duration dynamoCallTimeout,
    int dynamoIoThreads,
    Duration shutdownDrain,
    Duration shutdownGrace,
    double hotKeyLogShare,
    String grpcBindAddress,
    String metricsBindAddress,
    TlsConfig tls,
    List<byte[]> acceptedPageTokenKeys,
    Optional<URI> auditPushgateway,
    AdmissionConfig admission,
    Optional<Integer> healthPort,
    TraceSettings tracing) {

  public static final String DEFAULT_REGION = "us-east-1";
  public static final String DEFAULT_TABLE_NAME = "warehouse";
  public static final Duration DEFAULT_DYNAMO_CALL_TIMEOUT = Duration.ofSeconds(3);
  public static final int DEFAULT_DYNAMO_IO_THREADS = 1;
  /** Half of a pattern's requests to one partition key: worth a look, whatever the rate. */
  public static final double DEFAULT_HOT_KEY_LOG_SHARE = 0.5;

  /** A plaintext service on every interface: what tests and tools that build the record directly mean. */
  public StoreServiceConfig(String serviceName, int grpcPort, int metricsPort, Optional<URI> dynamoEndpoint, String region,
      String tableName, boolean createTable, Optional<byte[]> pageTokenKey, Duration dynamoCallTimeout,
      int dynamoIoThreads, Duration shutdownDrain, Duration shutdownGrace, double hotKeyLogShare) {
    this(serviceName, grpcPort, metricsPort, dynamoEndpoint, region, tableName, createTable, pageTokenKey,
        dynamoCallTimeout, dynamoIoThreads, shutdownDrain, shutdownGrace, hotKeyLogShare, ALL_INTERFACES,
        ALL_INTERFACES, TlsConfig.PLAINTEXT, List.of(), Optional.empty(), AdmissionConfig.DEFAULT, Optional.empty(),
        TraceSettings.OFF);
  }

  /** The same service with other TLS settings. */
  public StoreServiceConfig withTls(TlsConfig tls) {
    return new StoreServiceConfig(serviceName, grpcPort, metricsPort, dynamoEndpoint, region, tableName, createTable,
        pageTokenKey, dynamoCallTimeout, dynamoIoThreads, shutdownDrain, shutdownGrace, hotKeyLogShare, grpcBindAddress,
        metricsBindAddress, tls, acceptedPageTokenKeys, auditPushgateway, admission, healthPort, tracing);
  }

  /** The same service, tracing as {@code tracing} says. */
  public StoreServiceConfig withTracing(TraceSettings tracing) {
    return new StoreServiceConfig(serviceName, grpcPort, metricsPort, dynamoEndpoint, region, tableName, createTable,
        pageTokenKey, dynamoCallTimeout, dynamoIoThreads, shutdownDrain, shutdownGrace, hotKeyLogShare, grpcBindAddress,
        metricsBindAddress, tls, acceptedPageTokenKeys, auditPushgateway, admission, healthPort, tracing);
  }

  /** The same service with other admission settings. */
  public StoreServiceConfig withAdmission(AdmissionConfig admission) {
    return new StoreServiceConfig(serviceName, grpcPort, metricsPort, dynamoEndpoint, region, tableName, createTable,
        pageTokenKey, dynamoCallTimeout, dynamoIoThreads, shutdownDrain, shutdownGrace, hotKeyLogShare, grpcBindAddress,
        metricsBindAddress, tls, acceptedPageTokenKeys, auditPushgateway, admission, healthPort, tracing);
  }

  /** The same service, whose audit pushes its outcome to the Pushgateway at {@code pushgateway}. */
  public StoreServiceConfig withAuditPushgateway(URI pushgateway) {
    return new StoreServiceConfig(serviceName, grpcPort, metricsPort, dynamoEndpoint, region, tableName, createTable,
        pageTokenKey, dynamoCallTimeout, dynamoIoThreads, shutdownDrain, shutdownGrace, hotKeyLogShare, grpcBindAddress,
        metricsBindAddress, tls, acceptedPageTokenKeys, Optional.of(pushgateway), admission, healthPort, tracing);
  }

  /** What the process assembly reads: ports, addresses, TLS and the stop. */
  public ProcessSettings process() {
    return new ProcessSettings(serviceName, grpcBindAddress, grpcPort, metricsBindAddress, metricsPort, healthPort, tls,
        admission.maxStreams(), shutdownDrain, shutdownGrace, tracing);
  }

  /**
   * Reads the configuration of one service from environment variables.
   *
   * @throws IllegalArgumentException naming every malformed variable
   */
  public static StoreServiceConfig fromEnvironment(
      String serviceName, int defaultGrpcPort, int defaultMetricsPort, Map<String, String> env) {
    EnvReader reader = new EnvReader(env);
    StoreServiceConfig config = read(serviceName, defaultGrpcPort, defaultMetricsPort, reader);
    reader.throwIfProblems();
    return config;
  }

  /** The environment variables a service reads. */
  public static List<String> variables() {
    EnvReader reader = new EnvReader(Map.of());
    read("any", 1, 1, reader);
    return reader.names();
  }

  private static StoreServiceConfig read(String serviceName, int defaultGrpcPort, int defaultMetricsPort, EnvReader reader) {
    StoreServiceConfig config = new StoreServiceConfig(
        serviceName,
        reader.port("GRPC_PORT", defaultGrpcPort),
        reader.port("METRICS_PORT", defaultMetricsPort),
        reader.uri("DYNAMODB_ENDPOINT"),
        reader.string("AWS_REGION", DEFAULT_REGION),
        reader.string("TABLE_NAME", DEFAULT_TABLE_NAME),
        reader.bool("TABLE_AUTO_CREATE", false),
        reader.aesKey("PAGE_TOKEN_KEY"),
        Duration.ofMillis(reader.positiveLong("DYNAMODB_CALL_TIMEOUT_MS", DEFAULT_DYNAMO_CALL_TIMEOUT.toMillis())),
        reader.positiveInt("DYNAMODB_IO_THREADS", DEFAULT_DYNAMO_IO_THREADS),
        Duration.ofMillis(reader.nonNegativeLong("SHUTDOWN_DRAIN_MS", DEFAULT_SHUTDOWN_DRAIN.toMillis())),
        Duration.ofSeconds(reader.positiveLong("SHUTDOWN_GRACE_SECONDS", DEFAULT_SHUTDOWN_GRACE.getSeconds())),
        reader.fraction("HOT_KEY_LOG_SHARE", DEFAULT_HOT_KEY_LOG_SHARE),
        reader.bindAddress("GRPC_BIND_ADDRESS", ALL_INTERFACES),
        reader.bindAddress("METRICS_BIND_ADDRESS", ALL_INTERFACES),
        TlsConfig.read(reader),
        reader.aesKeys("PAGE_TOKEN_ACCEPTED_KEYS"),
        reader.uri("AUDIT_PUSHGATEWAY_URL"),
        AdmissionConfig.read(reader, AdmissionConfig.SERVICE_MAX_STREAMS),
        reader.optionalPort("HEALTH_PORT"),
        // The services' callers are the gateway and each other, whose trace they continue.
        TraceSettings.read(reader, true));
    reader.logSettings();
    if (config.pageTokenKey.isEmpty() && !config.acceptedPageTokenKeys.isEmpty()) {
      reader.problem("PAGE_TOKEN_ACCEPTED_KEYS needs PAGE_TOKEN_KEY: a random key would seal tokens no other instance opens");
    }
    return config;
  }

  /** The fields of the start-up log line: every setting, no secrets. */
  public Fields fields() {
    return new Fields().add("service", serviceName)
        .add("grpc_port", grpcPort)
        .add("metrics_port", metricsPort)
        .add("health_port", healthPort.map(String::valueOf).orElse("none"))
        .add("dynamodb_endpoint", dynamoEndpoint.map(URI::toString).orElse("aws"))
        .add("region", region)
        .add("table", tableName)
        .add("table_auto_create", createTable)
        .add("page_token_key", pageTokenKey.isPresent() ? "configured" : "random-per-process")
        .add("page_token_accepted_keys", acceptedPageTokenKeys.size())
        .add("dynamodb_call_timeout_ms", dynamoCallTimeout.toMillis())
        .add("dynamodb_io_threads", dynamoIoThreads)
        .add("shutdown_drain_ms", shutdownDrain.toMillis())
        .add("shutdown_grace_s", shutdownGrace.getSeconds())
        .add("hot_key_log_share", hotKeyLogShare)
        .add("grpc_bind_address", grpcBindAddress)
        .add("metrics_bind_address", metricsBindAddress)
        .addAll(tls.fields())
        .add("audit_pushgateway", auditPushgateway.map(URI::toString).orElse("none"))
        .addAll(admission.fields())
        .add("traces_exporter", tracing.exporterName())
        .add("trace_trust_incoming", tracing.trustIncoming());
  }

  /** {@link #fields} as one line, {@code key=value key=value}. */
  public String describe() {
    return fields().toString();
  }
}
