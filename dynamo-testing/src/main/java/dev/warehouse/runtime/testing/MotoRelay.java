package dev.warehouse.runtime.testing;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The plumbing of a proxy in front of moto ({@link DynamoFaultProxy}, the simulation's step proxy): a DynamoDB
 * request passed on as it came, moto's answer passed back, and an error answered as DynamoDB words it.
 */
public final class MotoRelay {

  /** The prefix of a DynamoDB error's {@code __type}, which the SDK maps to its exception class. */
  public static final String ERROR_TYPE_PREFIX = "com.amazonaws.dynamodb.v20120810#";
  /** Hop-by-hop headers and those the HTTP client sets itself. */
  private static final Set<String> UNFORWARDED_HEADERS =
      Set.of("host", "content-length", "connection", "expect", "upgrade", "transfer-encoding", "keep-alive");

  private final URI target;
  private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /** A relay to {@code target}, moto's endpoint. */
  public MotoRelay(URI target) {
    this.target = target;
  }

  /** Sends the request on to moto and returns moto's answer, without answering the caller. */
  public HttpResponse<byte[]> forward(HttpExchange exchange, byte[] body) throws IOException {
    HttpRequest.Builder request = HttpRequest.newBuilder(target.resolve(exchange.getRequestURI()))
        .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
    exchange.getRequestHeaders().forEach((name, values) -> {
      if (!UNFORWARDED_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
        values.forEach(v -> request.header(name, v));
      }
    });
    try {
      return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  /** Answers the caller with moto's {@code response}. */
  public static void answer(HttpExchange exchange, HttpResponse<byte[]> response) throws IOException {
    response.headers().map().forEach((name, values) -> {
      if (!UNFORWARDED_HEADERS.contains(name.toLowerCase(Locale.ROOT)) && !name.startsWith(":")) {
        exchange.getResponseHeaders().put(name, List.copyOf(values));
      }
    });
    send(exchange, response.statusCode(), response.body());
  }

  /** Answers a DynamoDB error, {@code json} its body ({@code __type} beginning {@link #ERROR_TYPE_PREFIX}). */
  public static void answerError(HttpExchange exchange, int status, String json) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.0");
    send(exchange, status, json.getBytes(StandardCharsets.UTF_8));
  }

  /** Answers {@code status} with {@code body} (none when empty). */
  public static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }
}
