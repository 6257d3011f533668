package dev.warehouse.runtime.metrics;

import dev.warehouse.runtime.trace.Tracing;
import io.opentelemetry.api.trace.SpanContext;

/**
 * The span of the call being served ({@link Tracing#currentSpan}), for Prometheus's exemplars: a latency recorded
 * while a sampled call is served keeps that call's trace id beside its bucket, so a slow bucket on the dashboard
 * leads to a trace of a slow call.
 */
final class CallSpans implements io.prometheus.metrics.tracer.common.SpanContext {

  @Override
  public String getCurrentTraceId() {
    SpanContext span = Tracing.currentSpan();
    return span.isValid() ? span.getTraceId() : null;
  }

  @Override
  public String getCurrentSpanId() {
    SpanContext span = Tracing.currentSpan();
    return span.isValid() ? span.getSpanId() : null;
  }

  @Override
  public boolean isCurrentSpanSampled() {
    return Tracing.currentSpan().isSampled();
  }

  @Override
  public void markCurrentSpanAsExemplar() {
    // Nothing to mark: every sampled span is exported.
  }
}
