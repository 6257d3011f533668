package dev.warehouse.runtime.process;

import dev.warehouse.runtime.tls.TransportSecurity;
import dev.warehouse.runtime.trace.Tracing;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The heavy objects every process has, built once by {@link ServerProcess} and handed to its plug-in.
 *
 * @param registry  the process's metrics, served on its metrics port
 * @param scheduler timers for retry backoff and periodic work; never blocked on
 * @param transport the process's TLS identity and CA, for its own client channels too
 * @param resources what the plug-in opens besides, closed after the server stops
 * @param tracing   the process's spans: its client channels add {@link Tracing#clientInterceptor}
 */
public record ProcessContext(
    ProcessSettings settings,
    PrometheusMeterRegistry registry,
    Clock clock,
    ScheduledExecutorService scheduler,
    TransportSecurity transport,
    Resources resources,
    Tracing tracing) {}
