package dev.warehouse.bench.stack;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Debian's nginx as a gRPC proxy ({@code grpc_pass}, upstream keepalive, one worker per core): the
 * peer proxy the gateway is measured against.
 */
public final class Nginx implements AutoCloseable {

  public final int port;
  public final String version;
  private final Process process;

  private Nginx(Process process, int port, String version) {
    this.process = process;
    this.port = port;
    this.version = version;
  }

  /** Forwards every call to one backend. */
  public static Nginx start(Path dir, int backendPort) throws Exception {
    return start(dir, Map.of("/", backendPort));
  }

  /**
   * Forwards calls by path prefix (a gRPC service's {@code /package.Service/}, or {@code /} for
   * all) to the backend on that port, as the gateway routes by service.
   */
  public static Nginx start(Path dir, Map<String, Integer> backendPortByPrefix) throws Exception {
    Files.createDirectories(dir.resolve("temp"));
    int port = Proc.freePort();
    StringBuilder upstreams = new StringBuilder();
    StringBuilder locations = new StringBuilder();
    int n = 0;
    for (Map.Entry<String, Integer> route : backendPortByPrefix.entrySet()) {
      String upstream = "backend" + n++;
      upstreams.append("  upstream %s { server 127.0.0.1:%d; keepalive 64; }%n".formatted(upstream, route.getValue()));
      locations.append("    location %s { grpc_pass grpc://%s; }%n".formatted(route.getKey(), upstream));
    }
    Path conf = dir.resolve("nginx.conf");
    Files.writeString(conf, """
        worker_processes auto;
        daemon off;
        pid %1$s/nginx.pid;
        error_log %1$s/error.log warn;
        events { worker_connections 4096; }
        http {
          access_log off;
          client_body_temp_path %1$s/temp/body;
          proxy_temp_path %1$s/temp/proxy;
          fastcgi_temp_path %1$s/temp/fastcgi;
          uwsgi_temp_path %1$s/temp/uwsgi;
          scgi_temp_path %1$s/temp/scgi;
        %2$s  server {
            listen 127.0.0.1:%3$d http2;
        %4$s  }
        }
        """.formatted(dir, upstreams, port, locations));
    String binary = System.getenv().getOrDefault("NGINX_BIN", "nginx");
    Process version = new ProcessBuilder(binary, "-v").redirectErrorStream(true).start();
    String v = new String(version.getInputStream().readAllBytes()).trim().replace("nginx version: ", "");
    version.waitFor();
    Process process = new ProcessBuilder(binary, "-p", dir.toString(), "-c", conf.toString(), "-e", dir.resolve("error.log").toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("stdout.log").toFile()).start();
    for (int i = 0; i < 100; i++) {
      try (Socket s = new Socket("127.0.0.1", port)) {
        return new Nginx(process, port, v);
      } catch (IOException notYet) {
        Thread.sleep(50);
      }
    }
    process.destroyForcibly();
    throw new IllegalStateException("nginx did not start; see " + dir.resolve("error.log"));
  }

  /** CPU seconds of the master and its workers. */
  public double cpuSeconds() {
    return Proc.cpuSeconds(process.pid())
        // a worker that ended in the meantime (-1) counts nothing
        + process.children().mapToDouble(worker -> Proc.cpuSeconds(worker.pid())).filter(s -> s >= 0).sum();
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    process.waitFor(10, TimeUnit.SECONDS);
    process.destroyForcibly();
  }
}
