package dev.warehouse.runtime.trace;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The tracer of a process whose tracing is off: each span is only its ids, the parent's trace id (or a new one for a
 * root) and a new span id, recorded nowhere. The SDK with its always-off sampler makes no ids for a root span at all,
 * and a call's log lines need one; this also keeps the SDK's classes out of a process that does not trace.
 */
final class IdsOnly implements Tracer {

  @Override
  public SpanBuilder spanBuilder(String spanName) {
    return new Builder();
  }

  private static final class Builder implements SpanBuilder {
    private Context parent;

    @Override
    public SpanBuilder setParent(Context context) {
      this.parent = context;
      return this;
    }

    @Override
    public SpanBuilder setNoParent() {
      this.parent = Context.root();
      return this;
    }

    @Override
    public SpanBuilder addLink(SpanContext spanContext) {
      return this;
    }

    @Override
    public SpanBuilder addLink(SpanContext spanContext, Attributes attributes) {
      return this;
    }

    @Override
    public SpanBuilder setAttribute(String key, String value) {
      return this;
    }

    @Override
    public SpanBuilder setAttribute(String key, long value) {
      return this;
    }

    @Override
    public SpanBuilder setAttribute(String key, double value) {
      return this;
    }

    @Override
    public SpanBuilder setAttribute(String key, boolean value) {
      return this;
    }

    @Override
    public <T> SpanBuilder setAttribute(AttributeKey<T> key, T value) {
      return this;
    }

    @Override
    public SpanBuilder setSpanKind(SpanKind spanKind) {
      return this;
    }

    @Override
    public SpanBuilder setStartTimestamp(long startTimestamp, TimeUnit unit) {
      return this;
    }

    @Override
    public Span startSpan() {
      SpanContext parentSpan = Span.fromContext(parent == null ? Context.current() : parent).getSpanContext();
      ThreadLocalRandom random = ThreadLocalRandom.current();
      String traceId = parentSpan.isValid() ? parentSpan.getTraceId() : hex(random.nextLong() | 1) + hex(random.nextLong());
      TraceFlags flags = parentSpan.isValid() ? parentSpan.getTraceFlags() : TraceFlags.getDefault();
      TraceState state = parentSpan.isValid() ? parentSpan.getTraceState() : TraceState.getDefault();
      return Span.wrap(SpanContext.create(traceId, hex(random.nextLong() | 1), flags, state));
    }

    private static String hex(long value) {
      String digits = Long.toHexString(value);
      return "0".repeat(16 - digits.length()) + digits;
    }
  }
}
