package dev.warehouse.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Tools run bounded: a hung tool fails its test instead of holding the build. */
class CommandsTest {

  private static final Path HERE = Path.of(".");

  @Test
  void aToolThatHangs_isKilled_withWhatItStarted_andFailsWithWhatItPrinted() {
    // A 600 s sleep that bash starts as its child, its length spelled with this JVM's pid so that no other
    // process's command line holds it: found by its command line once bash, its parent, is gone.
    String marker = "600." + ProcessHandle.current().pid();
    assertThatThrownBy(() -> Commands.run(HERE, Duration.ofSeconds(3),
            List.of("bash", "-c", "echo waiting for nothing; sleep " + marker + "; true")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("did not finish within PT3S")
        .hasMessageContaining("waiting for nothing");
    Eventually.await(() -> ProcessHandle.allProcesses()
            .filter(process -> process.info().commandLine().orElse("").contains(marker))
            .filter(ProcessHandle::isAlive).count(), alive -> alive == 0);
  }

  @Test
  void aToolThatFinishes_givesItsExitValue_andEachStreamApart() throws Exception {
    Commands.Run run = Commands.run(HERE, Duration.ofSeconds(30),
        List.of("bash", "-c", "echo out; echo err >&2; exit 3"));
    assertThat(run.exitValue()).isEqualTo(3);
    assertThat(run.output()).isEqualTo("out\n");
    assertThat(run.errors()).isEqualTo("err\n");
  }
}
