package dev.warehouse.runtime.process;

import dev.warehouse.runtime.discovery.EventLoops;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.log.Fields;
import dev.warehouse.runtime.metrics.MetricsRegistries;
import dev.warehouse.runtime.metrics.MetricsServer;
import dev.warehouse.runtime.threads.DaemonThreads;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TransportSecurity;
import dev.warehouse.runtime.trace.Tracing;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running process, assembled in one place for every kind: metrics registry, TLS identity, the gRPC server on
 * Netty with health and reflection, the health-only port, the metrics endpoint, and a stop in order. What a kind
 * serves comes from its {@link ProcessPlugin}. {@code main} and the tests start processes here alike, so tests run
 * the production assembly.
 */
public final class ServerProcess implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ServerProcess.class);

  private final ProcessSettings settings;
  private final GrpcServer server;
  private final MetricsServer metrics;
  private final ScheduledExecutorService scheduler;
  private final TransportSecurity transport;
  private final Resources resources;

  private ServerProcess(ProcessSettings settings, GrpcServer server, MetricsServer metrics,
      ScheduledExecutorService scheduler, TransportSecurity transport, Resources resources) {
    this.settings = settings;
    this.server = server;
    this.metrics = metrics;
    this.scheduler = scheduler;
    this.transport = transport;
    this.resources = resources;
  }

  /**
   * Starts a process.
   *
   * @param startingFields every setting of the process, for its {@code starting} line (no secrets)
   * @param clientTls      whether the process's own client channels may speak TLS (its native libraries then load)
   */
  public static ServerProcess start(ProcessSettings settings, Fields startingFields, boolean clientTls,
      ProcessPlugin plugin) throws IOException {
    long started = System.nanoTime();
    startingFields.addTo(Events.info(log, "starting")).log();
    // What waits for nothing else runs on second threads while this one reads the certificates and builds the
    // server: Netty's native libraries, what the plug-in prepares (the DynamoDB client, say) and the check that the
    // key is the certificate's, so a second core shortens the start. The JVM's metrics are bound there once the
    // process serves: nothing reads them before the first scrape (docs/performance-log.md, start-up).
    ExecutorService aside = Executors.newFixedThreadPool(2, DaemonThreads.named("start-up"));
    Resources resources = new Resources();
    ScheduledExecutorService scheduler = null;
    TransportSecurity transport = null;
    try {
      aside.submit(() -> EventLoops.loadNatives(clientTls || settings.tls().serverMode() != TlsMode.PLAINTEXT));
      PrometheusMeterRegistry registry = MetricsRegistries.withoutJvmMetrics(settings.name());
      Clock clock = Clock.systemUTC();
      // Opened first, so closed last: the spans of the last calls are exported after the server has stopped.
      Tracing tracing = resources.closeOnStop(Tracing.open(settings.name(), settings.tracing()));
      plugin.prepare(new ProcessPlugin.Early(registry, clock, aside, tracing));
      // Unreadable certificates fail the start here, before the server is built; a key that is not the certificate's
      // fails it before the server serves, once a second thread has checked it.
      transport = TransportSecurity.load(settings.tls(), aside);
      scheduler = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("timer"));
      ProcessPlugin.Plugged plugged =
          plugin.plug(new ProcessContext(settings, registry, clock, scheduler, transport, resources, tracing));
      List<ServerInterceptor> interceptors = new ArrayList<>();
      interceptors.add(new MetricCollectingServerInterceptor(registry));
      interceptors.addAll(plugged.interceptors());
      // Handlers run on the gRPC I/O threads: they never block (the DynamoDB client and the backend channels are
      // asynchronous), and a hand-off to a handler pool added to every call's latency in the layer benchmark
      // (docs/performance-log.md). A client's calls past maxStreams wait at the client.
      GrpcServer server = new GrpcServer(
          // The span of each call wraps every interceptor of the plug-in's (the gateway's refusals are traced too).
          plugged.builder().apply(transport.serverBuilder(settings.grpcAddress())
              .directExecutor()
              .maxConcurrentCallsPerConnection(settings.maxStreams())).intercept(tracing.serverInterceptor()),
          plugged.services(), interceptors, settings.shutdownDrain(), settings.shutdownGrace());
      settings.healthPort().ifPresent(port ->
          server.serveHealthOn(ProcessSettings.listenAddress(settings.metricsBindAddress(), port)));
      transport.requireKeyMatch();
      server.start();
      transport.watchFiles();
      plugged.serving().accept(server);
      MetricsServer metrics = settings.metricsPort() >= 0
          ? MetricsServer.start(ProcessSettings.listenAddress(settings.metricsBindAddress(), settings.metricsPort()), registry)
          : null;
      aside.submit(() -> MetricsRegistries.bindJvmMetrics(registry));
      Listening.log(settings.name(), settings.grpcBindAddress(), server.port(), transport,
          metrics == null ? "none" : settings.metricsBindAddress() + ":" + metrics.port(), plugged.clients());
      Events.info(log, "started").addKeyValue("service", settings.name()).addKeyValue("grpc_port", server.port())
          .addKeyValue("metrics_port", metrics == null ? -1 : metrics.port())
          .addKeyValue("startup_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).log();
      return new ServerProcess(settings, server, metrics, scheduler, transport, resources);
    } catch (IOException | RuntimeException | Error e) {
      plugin.abandon();
      resources.closeAll();
      if (scheduler != null) {
        scheduler.shutdownNow();
      }
      if (transport != null) {
        transport.close();
      }
      throw e;
    } finally {
      aside.shutdown(); // its threads end once their tasks have
    }
  }

  public int grpcPort() {
    return server.port();
  }

  /** The metrics endpoint's port; the process must serve one. */
  public int metricsPort() {
    if (metrics == null) {
      throw new IllegalStateException(settings.name() + " serves no metrics endpoint");
    }
    return metrics.port();
  }

  public GrpcServer server() {
    return server;
  }

  /** Blocks the calling thread (main's) until the server has stopped. */
  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  /**
   * Stops as {@link GrpcServer#stop} does (NOT_SERVING, the drain delay, then in-flight calls get the grace
   * period), then closes what the plug-in opened, last first, the timer, the metrics port and the TLS files' watch.
   */
  @Override
  public void close() {
    server.stop();
    resources.closeAll();
    scheduler.shutdownNow();
    if (metrics != null) {
      metrics.close();
    }
    transport.close();
    Events.info(log, "stopped").addKeyValue("service", settings.name()).log();
  }
}
