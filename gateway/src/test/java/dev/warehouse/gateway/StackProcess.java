package dev.warehouse.gateway;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/** One process of the local stack, started from its runnable jar, as run.sh and compose start it. */
final class StackProcess implements AutoCloseable {

  static final Path ROOT = Path.of(System.getProperty("project.root", "..")).toAbsolutePath().normalize();
  private static final Path LOGS = ROOT.resolve("gateway/target/e2e-logs");

  final String name;
  final int grpcPort;
  final int metricsPort;
  private final List<String> command;
  private final Map<String, String> env;
  private Process process;

  private StackProcess(String name, String jar, List<String> args, Map<String, String> env, int grpcPort, int metricsPort) {
    this.name = name;
    this.grpcPort = grpcPort;
    this.metricsPort = metricsPort;
    this.command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m"));
    // The test JVMs' own flags (the parent pom's test.jvm.args): these processes are judged on behaviour too.
    for (String flag : System.getProperty("test.jvm.args", "").trim().split("\\s+")) {
      if (!flag.isEmpty()) {
        this.command.add(flag);
      }
    }
    this.command.addAll(List.of("-jar", ROOT.resolve(jar).toString()));
    this.command.addAll(args);
    this.env = env;
  }

  /** A service or the gateway, listening on the given ports, with {@code env} on top of the ports. */
  static StackProcess service(String name, String jar, int grpcPort, int metricsPort, Map<String, String> env) {
    Map<String, String> all = new java.util.HashMap<>(env);
    all.put("GRPC_PORT", Integer.toString(grpcPort));
    all.put("METRICS_PORT", Integer.toString(metricsPort));
    return new StackProcess(name, jar, List.of(), all, grpcPort, metricsPort);
  }

  /** A one-shot command of a jar (e.g. the demo-data loader). */
  static StackProcess command(String name, String jar, List<String> args) {
    return new StackProcess(name, jar, args, Map.of(), -1, -1);
  }

  StackProcess start() throws IOException {
    Files.createDirectories(LOGS);
    ProcessBuilder builder = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(LOGS.resolve(name + ".log").toFile()));
    builder.environment().putAll(env);
    process = builder.start();
    return this;
  }

  /** Starts and waits until the gRPC port accepts connections. */
  StackProcess startAndAwaitPort() throws IOException, InterruptedException {
    start();
    Awaitility.await(name + " listening on " + grpcPort).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
        .failFast(name + " exited; see " + LOGS.resolve(name + ".log"), () -> !process.isAlive())
        .ignoreExceptionsInstanceOf(IOException.class).until(() -> {
          try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", grpcPort), 200);
            return true;
          }
        });
    return this;
  }

  /** Runs a one-shot command to its end and returns its exit status and output. */
  String runToEnd(Duration timeout) throws Exception {
    start();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException(name + " did not finish within " + timeout);
    }
    return "exit=" + process.exitValue() + "\n" + Files.readString(LOGS.resolve(name + ".log"));
  }

  /** SIGTERM: the graceful stop. */
  void stop() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }

  /** SIGKILL: the crash. */
  void kill() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroyForcibly().waitFor();
    }
  }

  /**
   * SIGSTOP: the process hangs as a long GC pause or a starved node makes it hang. Its sockets stay open,
   * so its peers see no reset: their calls to it wait for their deadlines.
   */
  void freeze() throws IOException, InterruptedException {
    signal("-STOP");
  }

  /** SIGCONT: a frozen process runs on from where it stopped. */
  void thaw() throws IOException, InterruptedException {
    signal("-CONT");
  }

  private void signal(String signal) throws IOException, InterruptedException {
    if (process == null || !process.isAlive()) {
      throw new IllegalStateException(name + " is not running");
    }
    Process kill = new ProcessBuilder("kill", signal, Long.toString(process.pid())).redirectErrorStream(true).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("kill " + signal + " " + name + " failed: "
          + new String(kill.getInputStream().readAllBytes()));
    }
  }

  /** Whether the process was started and still runs. */
  boolean isAlive() {
    return process != null && process.isAlive();
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
