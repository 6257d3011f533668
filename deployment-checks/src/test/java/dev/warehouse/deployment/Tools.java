package dev.warehouse.deployment;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

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
}
