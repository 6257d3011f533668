package dev.warehouse.runtime.testing;

import dev.warehouse.runtime.moto.MotoProcess;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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

  private static MotoProcess process;

  private MotoServer() {}

  /** The endpoint of the shared server, starting it on first use. */
  public static synchronized URI endpoint() {
    if (process == null) {
      process = MotoProcess.start(launcher(), lenient() ? List.of("--lenient") : List.of(), true);
      Runtime.getRuntime().addShutdownHook(new Thread(MotoServer::stop, "moto-stop"));
    }
    return process.endpoint();
  }

  /** A server of the caller's own, with other {@code flags} than the shared one's; the caller closes it. */
  public static MotoProcess startOwn(String... flags) {
    return MotoProcess.start(launcher(), List.of(flags), true);
  }

  /** Whether the server is (or will be) started with {@code --lenient}. */
  public static boolean lenient() {
    return Boolean.parseBoolean(System.getProperty("moto.lenient", System.getenv("MOTO_LENIENT")));
  }

  private static Path launcher() {
    String configured = System.getProperty("moto.launcher");
    Path path = configured != null ? Path.of(configured) : MotoProcess.findLauncher(Path.of(""));
    if (path == null || !Files.isRegularFile(path)) {
      throw new IllegalStateException("moto launcher not found (system property moto.launcher=" + configured + ")");
    }
    return path;
  }

  private static synchronized void stop() {
    if (process != null) {
      process.close();
    }
  }
}
