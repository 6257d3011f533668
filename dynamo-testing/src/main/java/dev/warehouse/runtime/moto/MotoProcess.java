package dev.warehouse.runtime.moto;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;

/**
 * moto's server as the tests and the benchmark run it: through our launcher
 * ({@code tools/moto/serialized_moto_server.py}, which serializes requests and, unless {@code --lenient},
 * is as strict as DynamoDB's documentation) on a free loopback port. The launcher prints
 * {@code moto listening on URL} once it serves; this waits for that line.
 */
public final class MotoProcess implements AutoCloseable {

  public static final String INSTALL_HINT =
      "moto's server for Python 3 is needed: ./test.sh installs the pinned version (tools/python-requirements.txt) "
          + "and sets MOTO_PYTHON to the python that has it.";
  /** Where the launcher is, from the project's root. */
  public static final Path LAUNCHER = Path.of("tools", "moto", "serialized_moto_server.py");

  private static final String READY = "moto listening on ";
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final Process process;
  private final URI endpoint;

  private MotoProcess(Process process, URI endpoint) {
    this.process = process;
    this.endpoint = endpoint;
  }

  /**
   * Starts the launcher at {@code launcher} with {@code flags} (such as {@code --lenient}) and waits up to
   * a minute for it to serve. Its standard error goes to this process's when {@code inheritErrors}.
   */
  public static MotoProcess start(Path launcher, List<String> flags, boolean inheritErrors) {
    String python = System.getenv().getOrDefault("MOTO_PYTHON", "python3");
    List<String> command = new ArrayList<>(List.of(python, launcher.toString(), "--host", "127.0.0.1", "--port", "0"));
    command.addAll(flags);
    Process process;
    try {
      process = new ProcessBuilder(command)
          .redirectError(inheritErrors ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + python + ". " + INSTALL_HINT, e);
    }
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> firstLine = CompletableFuture.supplyAsync(() -> {
      try {
        return out.readLine();
      } catch (IOException e) {
        return null;
      }
    });
    String line;
    try {
      line = firstLine.get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      process.destroyForcibly();
      throw new IllegalStateException("moto did not start within 60 s. " + INSTALL_HINT, e);
    }
    if (line == null || !line.startsWith(READY)) {
      process.destroyForcibly();
      throw new IllegalStateException("moto failed to start (exit "
          + (process.isAlive() ? "?" : process.exitValue()) + "). " + INSTALL_HINT);
    }
    return new MotoProcess(process, URI.create(line.substring(READY.length()).trim()));
  }

  /** The launcher in {@code root} or the nearest directory above it that has one; null when none has. */
  public static Path findLauncher(Path root) {
    for (Path dir = root.toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve(LAUNCHER))) {
        return dir.resolve(LAUNCHER);
      }
    }
    return null;
  }

  public URI endpoint() {
    return endpoint;
  }

  /** The launcher's process id (the benchmark gives it its own cores). */
  public long pid() {
    return process.pid();
  }

  /** Requests per partition key of one table, as a launcher started with {@code --count-keys} counted them. */
  public record KeyCounts(Map<String, Long> reads, Map<String, Long> writes) {}

  /** The requests {@code table}'s partition keys received so far (the launcher must run with {@code --count-keys}). */
  public KeyCounts keyCounts(String table) {
    return keyCounts("GET", table);
  }

  /** Forgets {@code table}'s counts. */
  public void resetKeyCounts(String table) {
    keyCounts("DELETE", table);
  }

  private KeyCounts keyCounts(String method, String table) {
    HttpRequest request = HttpRequest.newBuilder(endpoint.resolve("/_keys/tables/" + URLEncoder.encode(table, StandardCharsets.UTF_8)))
        .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build();
    HttpResponse<String> response;
    try {
      response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    if (response.statusCode() != 200) {
      throw new IllegalStateException("key counts of " + table + ": HTTP " + response.statusCode() + " " + response.body());
    }
    JsonNode body = JsonNode.parser().parse(response.body());
    return new KeyCounts(counts(body.field("reads")), counts(body.field("writes")));
  }

  private static Map<String, Long> counts(Optional<JsonNode> node) {
    Map<String, Long> counts = new TreeMap<>();
    node.filter(JsonNode::isObject).ifPresent(n -> n.asObject().forEach((key, value) -> counts.put(key, Long.parseLong(value.asNumber()))));
    return counts;
  }

  /** Stops the server: SIGTERM, then a kill after five seconds. */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
