package dev.warehouse.testing;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Pushgateway's push endpoint on loopback (the JDK's HTTP server): it answers every request with
 * {@code status} and keeps what was pushed, as the Pushgateway's HTTP API receives it.
 */
public final class PushgatewayStub implements AutoCloseable {

  /** One request as received. */
  public record Push(String method, String path, String contentType, String body) {

    /** The samples of the body, by metric name (the audits' metrics carry no labels in the body). */
    public Map<String, Double> samples() {
      Map<String, Double> samples = new LinkedHashMap<>();
      body.lines().filter(line -> !line.isBlank() && !line.startsWith("#")).forEach(line -> {
        String[] parts = line.split(" ");
        samples.put(parts[0], Double.parseDouble(parts[1]));
      });
      return samples;
    }
  }

  private final HttpServer server;
  private final List<Push> pushes = new ArrayList<>();

  private PushgatewayStub(int status) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", exchange -> {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      synchronized (pushes) {
        pushes.add(new Push(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
            exchange.getRequestHeaders().getFirst("Content-Type"), body));
      }
      exchange.sendResponseHeaders(status, -1);
      exchange.close();
    });
    server.start();
  }

  /** A Pushgateway that accepts every push (HTTP 200, as the real one answers a valid PUT or POST). */
  public static PushgatewayStub start() {
    return start(200);
  }

  /** One that answers every push with {@code status}. */
  public static PushgatewayStub start(int status) {
    try {
      return new PushgatewayStub(status);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** An address where nothing listens: a Pushgateway that is down. */
  public static URI nobody() {
    try (ServerSocket closedSoon = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return URI.create("http://127.0.0.1:" + closedSoon.getLocalPort());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  public List<Push> pushes() {
    synchronized (pushes) {
      return List.copyOf(pushes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
