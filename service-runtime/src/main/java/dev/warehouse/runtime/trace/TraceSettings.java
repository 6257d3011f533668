package dev.warehouse.runtime.trace;

import dev.warehouse.runtime.env.EnvReader;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How a process traces its calls ({@link Tracing}).
 *
 * @param exporting     what becomes of the spans
 * @param trustIncoming whether a caller's {@code traceparent} is continued ({@code TRACE_TRUST_INCOMING}): yes in the
 *                      services, whose callers are the gateway and each other; no in the gateway, whose callers are
 *                      not ours, so a caller can neither join our traces nor choose what is sampled
 */
public record TraceSettings(Exporting exporting, boolean trustIncoming) {

  /** The standard variables a deployment sets beside {@code OTEL_TRACES_EXPORTER} (docs/configuration.md). */
  static final List<String> STANDARD = List.of("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
      "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES");

  /** Spans are never recorded; ids are still made, propagated and logged. */
  public static final TraceSettings OFF = new TraceSettings(new Exporting.Off(), true);

  /** What becomes of a process's spans. */
  public sealed interface Exporting {
    /** None recorded: each call still gets a trace id (the one its caller sent, or a new one) for its log lines. */
    record Off() implements Exporting {}

    /**
     * The OpenTelemetry SDK as the standard {@code OTEL_*} variables configure it ({@code OTEL_TRACES_EXPORTER},
     * {@code OTEL_EXPORTER_OTLP_ENDPOINT}, {@code OTEL_TRACES_SAMPLER} and its argument, ...).
     */
    record Standard(Map<String, String> variables) implements Exporting {
      public Standard {
        variables = Map.copyOf(variables);
      }
    }

    /** Every span, sampled, to {@code exporter} as it ends: what the tests read their spans from. */
    record To(SpanExporter exporter) implements Exporting {}
  }

  /** Every span sent to {@code exporter} as it ends, a caller's {@code traceparent} continued or not. */
  public static TraceSettings exportingTo(SpanExporter exporter, boolean trustIncoming) {
    return new TraceSettings(new Exporting.To(exporter), trustIncoming);
  }

  /**
   * Reads {@code OTEL_TRACES_EXPORTER} (unset or {@code none}: off) and {@code TRACE_TRUST_INCOMING}; when an
   * exporter is named, every other {@code OTEL_*} variable goes to the SDK as it is.
   */
  public static TraceSettings read(EnvReader reader, boolean trustIncomingByDefault) {
    String exporter = reader.string("OTEL_TRACES_EXPORTER", "none").toLowerCase(Locale.ROOT);
    // Named, so a deployment's list of what it may set has them; the SDK reads these and any other OTEL_* itself.
    STANDARD.forEach(name -> reader.string(name, ""));
    boolean trust = reader.bool("TRACE_TRUST_INCOMING", trustIncomingByDefault);
    if (exporter.equals("none")) {
      return new TraceSettings(new Exporting.Off(), trust);
    }
    return new TraceSettings(new Exporting.Standard(reader.startingWith("OTEL_")), trust);
  }

  /** Where the spans go, for the start-up line: {@code none}, the exporter's name, or {@code in-process}. */
  public String exporterName() {
    return exporting instanceof Exporting.Standard standard
        ? standard.variables().get("OTEL_TRACES_EXPORTER")
        : exporting instanceof Exporting.To ? "in-process" : "none";
  }
}
