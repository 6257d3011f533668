package dev.warehouse.runtime.trace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.runtime.log.CallFields;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.testing.LogRecords;
import dev.warehouse.runtime.metrics.MetricsRegistries;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Two processes' worth of servers on in-process channels: a front that serves a call by calling a back. What one
 * call's trace looks like in each, with tracing off and on, trusting its caller's {@code traceparent} or not.
 */
class TracingTest {

  /** A caller's trace context: W3C {@code traceparent}, sampled. */
  private static final String CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String TRACEPARENT = "00-" + CALLER_TRACE + "-00f067aa0ba902b7-01";

  private final List<Server> servers = new ArrayList<>();
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<Tracing> tracings = new ArrayList<>();
  private final PrometheusMeterRegistry registry = MetricsRegistries.withoutJvmMetrics("test");

  @AfterEach
  void stop() throws Exception {
    channels.forEach(ManagedChannel::shutdownNow);
    servers.forEach(Server::shutdownNow);
    for (Tracing tracing : tracings) {
      tracing.close();
    }
  }

  private Tracing open(String service, TraceSettings settings) {
    Tracing tracing = Tracing.open(service, settings);
    tracings.add(tracing);
    return tracing;
  }

  /** A server for {@code service} as the process assembly wraps it: the call's fields outermost, then its span. */
  private ManagedChannel serve(Tracing tracing, AdminServiceGrpc.AdminServiceImplBase service) throws Exception {
    String name = "tracing-" + UUID.randomUUID();
    // As the process assembly wraps a service: its call metrics innermost, the span around them, the fields outermost.
    servers.add(InProcessServerBuilder.forName(name).directExecutor()
        .addService(ServerInterceptors.intercept(service, new MetricCollectingServerInterceptor(registry),
            tracing.serverInterceptor(), CallFields.interceptor()))
        .build().start());
    ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    channels.add(channel);
    return channel;
  }

  /** Logs a line in its call, then answers. */
  private static AdminServiceGrpc.AdminServiceImplBase back() {
    return new AdminServiceGrpc.AdminServiceImplBase() {
      @Override
      public void listHotKeys(ListHotKeysRequest request, StreamObserver<ListHotKeysResponse> observer) {
        Events.info(LoggerFactory.getLogger(TracingTest.class), "back_served").log();
        observer.onNext(ListHotKeysResponse.getDefaultInstance());
        observer.onCompleted();
      }
    };
  }

  /** Logs a line in its call, calls the back through {@code tracing}'s client interceptor, then answers. */
  private static AdminServiceGrpc.AdminServiceImplBase front(ManagedChannel toBack, Tracing tracing) {
    AdminServiceGrpc.AdminServiceBlockingStub back =
        AdminServiceGrpc.newBlockingStub(ClientInterceptors.intercept(toBack, tracing.clientInterceptor()));
    return new AdminServiceGrpc.AdminServiceImplBase() {
      @Override
      public void listHotKeys(ListHotKeysRequest request, StreamObserver<ListHotKeysResponse> observer) {
        Events.info(LoggerFactory.getLogger(TracingTest.class), "front_served").log();
        observer.onNext(back.listHotKeys(request));
        observer.onCompleted();
      }
    };
  }

  /** A call to the front, made as an outside caller would, with its own {@code traceparent}. */
  private static void callWithCallersTrace(ManagedChannel front) {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER), TRACEPARENT);
    AdminServiceGrpc.newBlockingStub(front).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
        .listHotKeys(ListHotKeysRequest.getDefaultInstance());
  }

  private List<Object> traceIdsLogged(String frontService, TraceSettings frontSettings, TraceSettings backSettings)
      throws Exception {
    Tracing backTracing = open("back", backSettings);
    Tracing frontTracing = open(frontService, frontSettings);
    ManagedChannel front = serve(frontTracing, front(serve(backTracing, back()), frontTracing));
    try (LogRecords log = new LogRecords(TracingTest.class)) {
      callWithCallersTrace(front);
      List<LogRecords.Logged> lines = log.await(2);
      assertThat(lines).extracting(line -> line.field("event")).containsExactly("front_served", "back_served");
      assertThat(lines).allSatisfy(line -> assertThat(line.field("method"))
          .isEqualTo("warehouse.admin.v1.AdminService/ListHotKeys"));
      return lines.stream().map(line -> line.field("trace_id")).toList();
    }
  }

  @Test
  void tracingOff_everyLineOfOneCallCarriesOneTraceId_inEveryProcess_andAnUntrustedCallersIdIsNotIt() throws Exception {
    List<Object> ids = traceIdsLogged("front", new TraceSettings(new TraceSettings.Exporting.Off(), false),
        TraceSettings.OFF);
    assertThat(ids.get(0)).isInstanceOf(String.class).asString().matches("[0-9a-f]{32}").isNotEqualTo(CALLER_TRACE);
    assertThat(ids.get(1)).isEqualTo(ids.get(0));
  }

  @Test
  void aTrustedCallersTraceIsContinued() throws Exception {
    List<Object> ids = traceIdsLogged("front", TraceSettings.OFF, TraceSettings.OFF);
    assertThat(ids).containsExactly(CALLER_TRACE, CALLER_TRACE);
  }

  @Test
  void tracingOn_oneCallIsOneTrace_serverClientServer_linkedParentToChild() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    List<Object> ids = traceIdsLogged("front", TraceSettings.exportingTo(exporter, false),
        TraceSettings.exportingTo(exporter, true));

    List<SpanData> spans = exporter.getFinishedSpanItems();
    assertThat(spans).hasSize(3).allSatisfy(span -> {
      assertThat(span.getTraceId()).isEqualTo(ids.get(0));
      assertThat(span.getName()).isEqualTo("warehouse.admin.v1.AdminService/ListHotKeys");
      assertThat(span.getAttributes().asMap()).containsEntry(
          io.opentelemetry.api.common.AttributeKey.longKey("rpc.grpc.status_code"), 0L);
    });
    SpanData frontServer = only(spans, SpanKind.SERVER, "front");
    SpanData client = only(spans, SpanKind.CLIENT, "front");
    SpanData backServer = only(spans, SpanKind.SERVER, "back");
    // The untrusted caller's span is no parent of ours: the front's span is a root.
    assertThat(frontServer.getParentSpanContext().isValid()).isFalse();
    assertThat(client.getParentSpanId()).isEqualTo(frontServer.getSpanId());
    assertThat(backServer.getParentSpanId()).isEqualTo(client.getSpanId());

    // The latency histograms keep a sampled call's trace as an exemplar, for a scraper that asks for OpenMetrics.
    String openMetrics = registry.scrape("application/openmetrics-text; version=1.0.0; charset=utf-8");
    assertThat(openMetrics).containsPattern("grpc_server_processing_duration_seconds_bucket\\{.*\\} 1 # \\{span_id=\""
        + "[0-9a-f]{16}\",trace_id=\"" + ids.get(0) + "\"\\}");
  }

  @Test
  void theStandardVariables_sendSampledSpansOverOtlp_andTheRatioSamplerKeepsNoneAtZero() throws Exception {
    java.util.concurrent.atomic.AtomicInteger exports = new java.util.concurrent.atomic.AtomicInteger();
    com.sun.net.httpserver.HttpServer receiver = com.sun.net.httpserver.HttpServer.create(
        new java.net.InetSocketAddress("127.0.0.1", 0), 8);
    receiver.createContext("/v1/traces", exchange -> {
      exchange.getRequestBody().readAllBytes();
      exports.incrementAndGet();
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    receiver.start();
    try {
      String endpoint = "http://127.0.0.1:" + receiver.getAddress().getPort();
      dev.warehouse.runtime.env.EnvReader sampled = new dev.warehouse.runtime.env.EnvReader(java.util.Map.of(
          "OTEL_TRACES_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT", endpoint));
      dev.warehouse.runtime.env.EnvReader none = new dev.warehouse.runtime.env.EnvReader(java.util.Map.of(
          "OTEL_TRACES_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT", endpoint,
          "OTEL_TRACES_SAMPLER", "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG", "0"));
      for (dev.warehouse.runtime.env.EnvReader reader : List.of(none, sampled)) {
        TraceSettings settings = TraceSettings.read(reader, false);
        reader.throwIfProblems();
        assertThat(settings.exporterName()).isEqualTo("otlp");
        try (Tracing tracing = Tracing.open("standard", settings)) {
          ManagedChannel front = serve(tracing, back());
          callWithCallersTrace(front);
          tracing.close(); // flushes what the batch holds
        }
        // The ratio 0 exported nothing; the default sampler exported the call's span.
        assertThat(exports.get()).isEqualTo(reader == none ? 0 : 1);
      }
    } finally {
      receiver.stop(0);
    }
  }

  @Test
  void theLoggingExporter_writesEachSpanAsALogRecord() throws Exception {
    // What OTEL_TRACES_EXPORTER=logging ./run.sh does: each span a java.util.logging record (bridged into our lines).
    java.util.logging.Logger exporterLog =
        java.util.logging.Logger.getLogger("io.opentelemetry.exporter.logging.LoggingSpanExporter");
    List<String> records = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.logging.Handler handler = new java.util.logging.Handler() {
      @Override
      public void publish(java.util.logging.LogRecord record) {
        records.add(record.getMessage()); // the exporter formats its line itself
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    exporterLog.addHandler(handler);
    try {
      dev.warehouse.runtime.env.EnvReader reader = new dev.warehouse.runtime.env.EnvReader(java.util.Map.of(
          "OTEL_TRACES_EXPORTER", "logging"));
      try (Tracing tracing = Tracing.open("logged", TraceSettings.read(reader, false))) {
        callWithCallersTrace(serve(tracing, back()));
      }
      assertThat(records).anySatisfy(line -> assertThat(line)
          .contains("'warehouse.admin.v1.AdminService/ListHotKeys' : ").contains(" SERVER "));
    } finally {
      exporterLog.removeHandler(handler);
    }
  }

  private static SpanData only(List<SpanData> spans, SpanKind kind, String service) {
    return spans.stream().filter(span -> span.getKind() == kind && service.equals(span.getResource().getAttribute(
        io.opentelemetry.api.common.AttributeKey.stringKey("service.name")))).reduce((a, b) -> {
          throw new AssertionError("two " + kind + " spans of " + service);
        }).orElseThrow(() -> new AssertionError("no " + kind + " span of " + service));
  }
}
