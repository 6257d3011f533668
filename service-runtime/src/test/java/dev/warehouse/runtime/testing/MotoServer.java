package dev.warehouse.runtime.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One moto server per test JVM, started through our serializing launcher
 * ({@code tools/moto/serialized_moto_server.py}) on a free loopback port and stopped when the JVM
 * exits. Tests share it and keep apart by using their own tables and random IDs.
 *
 * <p>The launcher runs strict: it models ClientRequestTokens, eventually consistent reads (stale for
 * 200 ms after a write) and transaction conflicts as DynamoDB documents them; {@link StrictMoto}
 * changes that per table. The system property {@code moto.lenient=true} or the environment variable
 * {@code MOTO_LENIENT=true} starts it lenient instead, as kind as moto itself.
 */
public final class MotoServer {

  private static final String INSTALL_HINT =
      "The tests need moto's server for Python 3: pip install 'moto[server]' (or set MOTO_PYTHON to a python that has it).";

  private static URI endpoint;
  private static Process process;

  private MotoServer() {}

  /** The endpoint of the shared server, starting it on first use. */
  public static synchronized URI endpoint() {
    if (endpoint == null) {
      endpoint = start();
      Runtime.getRuntime().addShutdownHook(new Thread(MotoServer::stop, "moto-stop"));
    }
    return endpoint;
  }

  /** Whether the server is (or will be) started with {@code --lenient}. */
  public static boolean lenient() {
    return Boolean.parseBoolean(System.getProperty("moto.lenient", System.getenv("MOTO_LENIENT")));
  }

  private static URI start() {
    Path launcher = launcher();
    String python = System.getenv().getOrDefault("MOTO_PYTHON", "python3");
    List<String> command = new ArrayList<>(List.of(python, launcher.toString(), "--host", "127.0.0.1", "--port", "0"));
    if (lenient()) {
      command.add("--lenient");
    }
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    try {
      process = builder.start();
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
    if (line == null || !line.startsWith("moto listening on ")) {
      process.destroyForcibly();
      throw new IllegalStateException("moto failed to start (exit "
          + (process.isAlive() ? "?" : process.exitValue()) + "). " + INSTALL_HINT);
    }
    return URI.create(line.substring("moto listening on ".length()).trim());
  }

  private static Path launcher() {
    String configured = System.getProperty("moto.launcher");
    Path path = configured != null ? Path.of(configured) : findUpwards(Path.of("tools/moto/serialized_moto_server.py"));
    if (path == null || !Files.isRegularFile(path)) {
      throw new IllegalStateException("moto launcher not found (system property moto.launcher=" + configured + ")");
    }
    return path;
  }

  private static Path findUpwards(Path relative) {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve(relative))) {
        return dir.resolve(relative);
      }
    }
    return null;
  }

  private static synchronized void stop() {
    if (process != null) {
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
}
