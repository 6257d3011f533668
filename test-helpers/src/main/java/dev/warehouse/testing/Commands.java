package dev.warehouse.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The external tools a test runs (promtool, amtool, kubectl, buf, bash), each run to its end within a bound. */
public final class Commands {

  private Commands() {}

  /** How a tool exited, and what it wrote to its output and to its errors. */
  public record Run(int exitValue, String output, String errors) {
    /** Both streams, for a failure's message or a check that does not mind which one a line went to. */
    public String printed() {
      return output + errors;
    }
  }

  /** Runs {@code command} in {@code dir} to its end, at most {@code timeout}: {@link #run(ProcessBuilder, Duration)}. */
  public static Run run(Path dir, Duration timeout, List<String> command) throws IOException, InterruptedException {
    return run(new ProcessBuilder(command).directory(dir.toFile()), timeout);
  }

  /**
   * Runs {@code builder}'s command to its end, at most {@code timeout}: a tool that hangs is killed and fails the test
   * with what it printed. Its streams go to files, not pipes, so no read can block past the timeout (a test's own
   * timeout cannot interrupt a blocked pipe read) and no full pipe can stall the tool.
   */
  public static Run run(ProcessBuilder builder, Duration timeout) throws IOException, InterruptedException {
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
