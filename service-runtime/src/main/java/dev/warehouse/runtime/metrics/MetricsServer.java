package dev.warehouse.runtime.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.warehouse.runtime.threads.DaemonThreads;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Serves {@code GET /metrics} in the Prometheus text format on its own small HTTP port. */
public final class MetricsServer implements AutoCloseable {

  private final HttpServer http;
  private final ExecutorService executor;

  private MetricsServer(HttpServer http, ExecutorService executor) {
    this.http = http;
    this.executor = executor;
  }

  /**
   * Starts serving plain HTTP on {@code address} (scrapers speak HTTP; the port has nothing but
   * metrics); port 0 picks a free port (see {@link #port()}).
   */
  public static MetricsServer start(InetSocketAddress address, PrometheusMeterRegistry registry) throws IOException {
    HttpServer http = HttpServer.create(address, 0);
    http.createContext("/metrics", exchange -> respond(exchange, registry));
    ExecutorService executor = Executors.newSingleThreadExecutor(DaemonThreads.named("metrics-http"));
    http.setExecutor(executor);
    http.start();
    return new MetricsServer(http, executor);
  }

  private static final String OPENMETRICS = "application/openmetrics-text";
  private static final String OPENMETRICS_TYPE = OPENMETRICS + "; version=1.0.0; charset=utf-8";
  private static final String TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  public int port() {
    return http.getAddress().getPort();
  }

  private static void respond(HttpExchange exchange, PrometheusMeterRegistry registry) throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      // A scraper that asks for OpenMetrics (Prometheus does) also gets the latency histograms' exemplars: the trace
      // of a call in each bucket (MetricsRegistries).
      String accept = exchange.getRequestHeaders().getFirst("Accept");
      String type = accept != null && accept.contains(OPENMETRICS) ? OPENMETRICS_TYPE : TEXT_TYPE;
      byte[] body = registry.scrape(type).getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", type);
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    http.stop(0);
    executor.shutdownNow();
  }
}
