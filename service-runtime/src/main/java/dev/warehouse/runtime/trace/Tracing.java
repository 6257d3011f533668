package dev.warehouse.runtime.trace;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Contexts;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceId;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerProvider;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One trace per call, across every hop: a SERVER span for each call a process serves, a CLIENT span for each call it
 * makes to another of our services (and, in the DynamoDB plug-in, to DynamoDB), linked by W3C trace context in the
 * {@code traceparent} header.
 *
 * <p>A call's trace travels in its gRPC {@link io.grpc.Context}, as its log fields do ({@code CallFields}): the
 * handlers run on shared threads and complete on the DynamoDB client's, and the data-access layer completes its
 * futures in the call's gRPC context, so whatever a call does next, on whichever thread, finds its span there
 * ({@link #current}).
 *
 * <p>Off (the default), no span is recorded or exported, but every call still has a trace id, its caller's or a new
 * one, passed on to the calls it makes: the id its log lines carry in every process ({@code trace_id}).
 */
public final class Tracing implements AutoCloseable {

  private static final io.grpc.Context.Key<Context> KEY = io.grpc.Context.key("warehouse.trace");
  private static final TextMapPropagator W3C = W3CTraceContextPropagator.getInstance();
  private static final Metadata.Key<String> TRACEPARENT = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> TRACESTATE = Metadata.Key.of("tracestate", Metadata.ASCII_STRING_MARSHALLER);
  private static final AttributeKey<String> RPC_SYSTEM = AttributeKey.stringKey("rpc.system");
  private static final AttributeKey<String> RPC_SERVICE = AttributeKey.stringKey("rpc.service");
  private static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
  private static final AttributeKey<Long> RPC_STATUS = AttributeKey.longKey("rpc.grpc.status_code");
  /** The codes a server's span counts as its own error (OpenTelemetry's gRPC conventions); the rest are the caller's. */
  private static final Set<Status.Code> SERVER_ERRORS = EnumSet.of(Status.Code.UNKNOWN, Status.Code.DEADLINE_EXCEEDED,
      Status.Code.UNIMPLEMENTED, Status.Code.INTERNAL, Status.Code.UNAVAILABLE, Status.Code.DATA_LOSS);
  /** Not traced: probes every half second would bury the calls. */
  private static final List<String> UNTRACED = List.of("grpc.health.v1.Health/", "grpc.reflection.");

  private static final TextMapGetter<Metadata> FROM_HEADERS = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(Metadata headers) {
      return headers.keys();
    }

    @Override
    public String get(Metadata headers, String key) {
      return headers == null ? null : headers.get(headerKey(key));
    }
  };
  private static final TextMapSetter<Metadata> TO_HEADERS = (headers, key, value) -> headers.put(headerKey(key), value);

  private final Tracer tracer;
  private final boolean trustIncoming;
  private final boolean recording;
  private final AutoCloseable sdk;

  private Tracing(Tracer tracer, boolean trustIncoming, boolean recording, AutoCloseable sdk) {
    this.tracer = tracer;
    this.trustIncoming = trustIncoming;
    this.recording = recording;
    this.sdk = sdk;
  }

  /** The tracing of process {@code service}, as {@code settings} say; close it after the server stops (it flushes). */
  public static Tracing open(String service, TraceSettings settings) {
    if (settings.exporting() instanceof TraceSettings.Exporting.To to) {
      Resource resource = Resource.getDefault().merge(Resource.create(
          Attributes.of(AttributeKey.stringKey("service.name"), service)));
      SdkTracerProvider provider = SdkTracerProvider.builder().setResource(resource)
          .addSpanProcessor(SimpleSpanProcessor.create(to.exporter())).setSampler(Sampler.parentBased(Sampler.alwaysOn()))
          .build();
      return new Tracing(provider.get(Tracing.class.getName()), settings.trustIncoming(), true, provider::close);
    }
    if (settings.exporting() instanceof TraceSettings.Exporting.Standard standard) {
      Map<String, String> properties = new TreeMap<>();
      standard.variables().forEach((name, value) -> properties.put(name.toLowerCase(Locale.ROOT).replace('_', '.'), value));
      OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
          // Defaults the variables may override: traces only (metrics are Prometheus', logs are ours), over HTTP
          // (the exporter's JDK sender speaks no gRPC), and named as the process is.
          .addPropertiesSupplier(() -> Map.of("otel.metrics.exporter", "none", "otel.logs.exporter", "none",
              "otel.exporter.otlp.protocol", "http/protobuf", "otel.service.name", service))
          .addPropertiesCustomizer(config -> properties)
          .disableShutdownHook()
          .build().getOpenTelemetrySdk();
      return new Tracing(sdk.getTracer(Tracing.class.getName()), settings.trustIncoming(), true, sdk::close);
    }
    // Off: ids made and passed on (start), nothing recorded; no SDK class is loaded.
    return new Tracing(TracerProvider.noop().get(Tracing.class.getName()), settings.trustIncoming(), false, () -> {});
  }

  /** The tracer, for spans of this process's own (a DynamoDB request's, say). */
  public Tracer tracer() {
    return tracer;
  }

  /** Whether spans are recorded and exported (else only ids are made). */
  public boolean recording() {
    return recording;
  }

  /** The trace of the call being served (in the current gRPC context): its span; the root context outside a call. */
  public static Context current() {
    Context context = KEY.get();
    return context == null ? Context.root() : context;
  }

  /** The span of the call being served; an invalid one outside a call. */
  public static SpanContext currentSpan() {
    return Span.fromContext(current()).getSpanContext();
  }

  /** The trace id of the call being served, or {@code null} outside one: its log lines' {@code trace_id}. */
  public static String currentTraceId() {
    SpanContext span = currentSpan();
    return span.isValid() ? span.getTraceId() : null;
  }

  /**
   * A SERVER span for each call served, made current for the call in its gRPC context. The caller's
   * {@code traceparent} is its parent if the settings trust callers; otherwise the call starts a trace of its own.
   * Add it outermost of a service's interceptors, so that what they refuse is traced too.
   */
  public ServerInterceptor serverInterceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        MethodDescriptor<Q, R> method = call.getMethodDescriptor();
        if (untraced(method.getFullMethodName())) {
          return next.startCall(call, headers);
        }
        Context parent = trustIncoming ? W3C.extract(Context.root(), headers, FROM_HEADERS) : Context.root();
        Span span = start(method, parent, SpanKind.SERVER);
        ServerCall<Q, R> ending = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            end(span, status, SERVER_ERRORS.contains(status.getCode()));
            super.close(status, trailers);
          }
        };
        ServerCall.Listener<Q> listener = Contexts.interceptCall(
            io.grpc.Context.current().withValue(KEY, parent.with(span)), ending, headers, next);
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
          @Override
          public void onCancel() {
            // The caller left (or its deadline passed) before an answer: the span ends here, unanswered.
            span.setStatus(StatusCode.ERROR, "cancelled by the caller");
            span.end();
            super.onCancel();
          }
        };
      }
    };
  }

  /**
   * A CLIENT span for each call made to another of our services, a child of the call being served, whose context
   * it sends as {@code traceparent} in place of any the call carried.
   */
  public ClientInterceptor clientInterceptor() {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        Context parent = current();
        Span span = start(method, parent, SpanKind.CLIENT);
        Context traced = parent.with(span);
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            headers.discardAll(TRACEPARENT);
            headers.discardAll(TRACESTATE);
            W3C.inject(traced, headers, TO_HEADERS);
            super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onClose(Status status, Metadata trailers) {
                end(span, status, !status.isOk());
                super.onClose(status, trailers);
              }
            }, headers);
          }
        };
      }
    };
  }

  private Span start(MethodDescriptor<?, ?> method, Context parent, SpanKind kind) {
    if (!recording) {
      return idsOnly(parent);
    }
    String service = method.getServiceName();
    return tracer.spanBuilder(method.getFullMethodName()).setParent(parent).setSpanKind(kind)
        .setAttribute(RPC_SYSTEM, "grpc")
        .setAttribute(RPC_SERVICE, service == null ? "" : service)
        .setAttribute(RPC_METHOD, method.getBareMethodName() == null ? "" : method.getBareMethodName())
        .startSpan();
  }

  /**
   * A span that is only its ids, for tracing off: the parent's trace id (a new one at a root) and a new span id,
   * recorded nowhere. The SDK with its always-off sampler makes no ids for a root span at all, and a call's log
   * lines need one.
   */
  private static Span idsOnly(Context parent) {
    SpanContext parentSpan = Span.fromContext(parent).getSpanContext();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    String spanId = SpanId.fromLong(random.nextLong() | 1);
    if (!parentSpan.isValid()) {
      return Span.wrap(SpanContext.create(TraceId.fromLongs(random.nextLong() | 1, random.nextLong()), spanId,
          TraceFlags.getDefault(), TraceState.getDefault()));
    }
    return Span.wrap(SpanContext.create(parentSpan.getTraceId(), spanId, parentSpan.getTraceFlags(),
        parentSpan.getTraceState()));
  }

  private static void end(Span span, Status status, boolean error) {
    span.setAttribute(RPC_STATUS, (long) status.getCode().value());
    if (error) {
      span.setStatus(StatusCode.ERROR, status.getCode().name());
    }
    span.end();
  }

  /** The W3C headers' keys, made once: the propagator asks for them on every call. */
  private static Metadata.Key<String> headerKey(String name) {
    return switch (name) {
      case "traceparent" -> TRACEPARENT;
      case "tracestate" -> TRACESTATE;
      default -> Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    };
  }

  private static boolean untraced(String fullMethodName) {
    for (String prefix : UNTRACED) {
      if (fullMethodName.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** Exports what is still buffered and stops, waiting a few seconds at most. */
  @Override
  public void close() throws Exception {
    sdk.close();
  }
}
