package dev.warehouse.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checks' tools run bounded: a hung tool fails its test instead of holding the build. */
class ToolsTest {

  private static final Path HERE = Path.of(".");

  @Test
  void aToolThatHangs_isKilled_andFailsWithWhatItPrinted() {
    // A marker only this test's process carries, to find it among the JVM's children.
    String marker = "600." + ProcessHandle.current().pid();
    assertThatThrownBy(() -> Tools.run(HERE, Duration.ofMillis(300),
            List.of("bash", "-c", "echo waiting for nothing; exec sleep " + marker)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("did not finish within PT0.3S")
        .hasMessageContaining("waiting for nothing");
    assertThat(ProcessHandle.current().children()
            .filter(child -> child.info().commandLine().orElse("").contains(marker))
            .filter(ProcessHandle::isAlive))
        .as("the hung tool is killed").isEmpty();
  }

  @Test
  void aToolThatFinishes_givesItsExitValue_andEachStreamApart() throws Exception {
    Tools.Run run = Tools.run(HERE, Duration.ofSeconds(30),
        List.of("bash", "-c", "echo out; echo err >&2; exit 3"));
    assertThat(run.exitValue()).isEqualTo(3);
    assertThat(run.output()).isEqualTo("out\n");
    assertThat(run.errors()).isEqualTo("err\n");
  }
}
