package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.process.CdsTraining;
import dev.warehouse.runtime.process.HealthProbe;
import dev.warehouse.testing.LogLines;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The class-data-sharing archive as run.sh makes and uses it on JDK 17, with the packaged gateway jar: its
 * {@code train-cds} run writes an archive, a JVM of the jar maps its classes from it (the health probe's
 * JVM here), and an archive that does not match the jar only costs the speed-up: the JVM warns and runs
 * without it.
 */
class ClassDataArchiveIT {

  private static final Path JAR = StackProcess.ROOT.resolve("gateway/target/gateway.jar");

  @TempDir
  Path work;

  @Test
  void trainingRun_writesAnArchive_thatTheJvmMaps_andOneForAnotherJarOnlyCostsTheSpeedUp() throws Exception {
    Path archive = work.resolve("gateway.jsa");
    Run training = java(List.of("-XX:ArchiveClassesAtExit=" + archive, "-jar", JAR.toString(), CdsTraining.COMMAND));
    assertThat(training.exit).as(training.output).isZero();
    assertThat(LogLines.events(training.output, "cds_training_done")).as(training.output).singleElement()
        .satisfies(line -> assertThat(line).containsEntry("service", "gateway"));
    assertThat(archive).isNotEmptyFile();

    // The probe's JVM with -Xshare:on, which refuses to start without the archive: its classes, the jar's and
    // the JDK's, come out of it. Nothing listens on the port, so the probe answers UNREACHABLE (exit 1).
    String port = Integer.toString(closedPort());
    Run probe = java(List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:on", "-Xlog:class+load=info", "-cp",
        JAR.toString(), HealthProbe.class.getName(), port));
    assertThat(probe.exit).as(probe.output).isEqualTo(1);
    assertThat(probe.output).contains(HealthProbe.class.getName() + " source: shared objects file (top)",
        "io.grpc.netty.shaded.io.netty.channel.epoll.Epoll source: shared objects file (top)");

    // The same archive with another jar (a copy: another path and time): the JVM says so, and runs as it would
    // without one.
    Path other = Files.copy(JAR, work.resolve("gateway.jar"));
    Run stale = java(List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto", "-cp", other.toString(),
        HealthProbe.class.getName(), port));
    assertThat(stale.exit).as(stale.output).isEqualTo(1);
    assertThat(stale.output).contains("Unable to use shared archive", "UNREACHABLE");
  }

  private record Run(int exit, String output) {}

  private Run java(List<String> args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(args);
    Path log = Files.createTempFile(work, "java", ".log");
    Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(3, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IllegalStateException(String.join(" ", command) + " did not finish");
    }
    return new Run(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
