package dev.warehouse.runtime.metrics;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/** Builds the Prometheus registry of a process, with JVM metrics and latency histograms. */
public final class MetricsRegistries {

  private MetricsRegistries() {}

  /**
   * A registry whose timers all publish histogram buckets (Micrometer exports only count, sum and max
   * unless asked), so Grafana can compute p50/p99 across instances. Every meter carries the
   * {@code application} tag; the {@code service} tag is left to gRPC's service name. It holds
   * {@code build_info} ({@link BuildInfo}) from the start.
   */
  public static PrometheusMeterRegistry prometheus(String application) {
    return bindJvmMetrics(withoutJvmMetrics(application));
  }

  /**
   * The same registry before {@link #bindJvmMetrics}: a process binds those once it serves, since binding
   * them (the JVM's management beans, GC notification listeners) is CPU the start would otherwise wait for,
   * and nothing reads them before the first scrape.
   */
  public static PrometheusMeterRegistry withoutJvmMetrics(String application) {
    // Each histogram bucket keeps the trace of a call it counted, as an exemplar (OpenMetrics scrapes only).
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT,
        new PrometheusRegistry(), Clock.SYSTEM, new CallSpans());
    registry.config()
        .commonTags("application", application)
        .meterFilter(new MeterFilter() {
          @Override
          public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
            if (id.getType() != Meter.Type.TIMER) {
              return config;
            }
            return DistributionStatisticConfig.builder().percentilesHistogram(true).build().merge(config);
          }
        });
    BuildInfo.current().register(registry);
    return registry;
  }

  /** Adds the JVM's metrics (memory, GC, threads, classes, CPU, uptime) to {@code registry}; returns it. */
  public static PrometheusMeterRegistry bindJvmMetrics(PrometheusMeterRegistry registry) {
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    return registry;
  }
}
