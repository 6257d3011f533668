package dev.warehouse.deployment;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** The operators' tools the checks run (promtool, amtool, Alertmanager, the blackbox exporter): found, never skipped. */
final class Tools {

  private Tools() {}

  /** The tool {@code variable} names, or the first of {@code names} on the PATH. */
  static Optional<String> find(String variable, String... names) {
    String configured = System.getenv(variable);
    if (configured != null && !configured.isBlank()) {
      return Optional.of(configured);
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      for (String name : names) {
        if (Files.isExecutable(Path.of(dir, name))) {
          return Optional.of(Path.of(dir, name).toString());
        }
      }
    }
    return Optional.empty();
  }

  /** The same, failing the test when there is none: {@code ./test.sh} installs Debian's {@code debianPackage}. */
  static String require(String variable, String debianPackage, String... names) {
    return find(variable, names).orElseThrow(() -> new AssertionError(names[0] + " is missing (a missing tool fails, "
        + "never skips): ./test.sh installs it (Debian's " + debianPackage + " package), or set " + variable));
  }

  /** A port free a moment ago, for a tool that must be told where to listen. */
  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** How a tool exited, and what it wrote to its output and to its errors. */
  record Run(int exitValue, String output, String errors) {
    /** Both streams, for a failure's message or a check that does not mind which one a line went to. */
    String printed() {
      return output + errors;
    }
  }

  /** Runs {@code command} in {@code dir} to its end, at most {@code timeout}: {@link #run(ProcessBuilder, Duration)}. */
  static Run run(Path dir, Duration timeout, List<String> command) throws IOException, InterruptedException {
    return run(new ProcessBuilder(command).directory(dir.toFile()), timeout);
  }

  /**
   * Runs {@code builder}'s command to its end, at most {@code timeout}: a tool that hangs is killed and fails the test
   * with what it printed. Its streams go to files, not pipes, so no read can block past the timeout (a test's own
   * timeout cannot interrupt a blocked pipe read) and no full pipe can stall the tool.
   */
  static Run run(ProcessBuilder builder, Duration timeout) throws IOException, InterruptedException {
    Path output = Files.createTempFile("tool-", ".out");
    Path errors = Files.createTempFile("tool-", ".err");
    Process process = null;
    try {
      process = builder.redirectOutput(output.toFile()).redirectError(errors.toFile()).start();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new AssertionError(String.join(" ", builder.command()) + " did not finish within " + timeout
            + "; it printed:\n" + read(output) + read(errors));
      }
      return new Run(process.exitValue(), read(output), read(errors));
    } finally {
      // Past the timeout, or interrupted by the test's own: nothing the tool started outlives the test.
      if (process != null && process.isAlive()) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      Files.deleteIfExists(output);
      Files.deleteIfExists(errors);
    }
  }

  private static String read(Path file) throws IOException {
    return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
  }
}
