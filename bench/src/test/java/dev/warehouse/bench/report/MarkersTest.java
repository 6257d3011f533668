package dev.warehouse.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MarkersTest {

  private static final String BEGIN = "<!-- capacity:begin -->";
  private static final String END = "<!-- capacity:end -->";

  @Test
  void replacesOnlyWhatLiesBetweenTheMarkers_andKeepsThem() {
    String doc = "# Operations\n\nBefore.\n\n## Capacity and cost\n\nIntro.\n\n" + BEGIN + "\nold table\nold line\n" + END
        + "\n\n## Alerts\n\nAfter.\n";

    String once = Markers.replace(doc, BEGIN, END, "| new | table |\n");
    String twice = Markers.replace(once, BEGIN, END, "| new | table |");

    assertThat(once).isEqualTo("# Operations\n\nBefore.\n\n## Capacity and cost\n\nIntro.\n\n" + BEGIN
        + "\n| new | table |\n" + END + "\n\n## Alerts\n\nAfter.\n");
    assertThat(twice).as("running the tool again changes nothing").isEqualTo(once);
  }

  @Test
  void refusesADocumentWithoutBothMarkers_inOrder_once() {
    assertThatThrownBy(() -> Markers.replace("# Operations\n", BEGIN, END, "x")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Markers.replace(BEGIN + "\n", BEGIN, END, "x")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Markers.replace(END + "\n" + BEGIN + "\n", BEGIN, END, "x")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Markers.replace(BEGIN + END + BEGIN + END, BEGIN, END, "x")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void writesIntoTheFile_orCreatesItFromTheSkeleton(@TempDir Path dir) throws Exception {
    Path existing = dir.resolve("operations.md");
    Files.writeString(existing, "# Ops\n\nKept.\n\n" + BEGIN + "\n" + END + "\n\nKept too.\n");
    Markers.write(existing, "unused", BEGIN, END, "figures\n");
    assertThat(Files.readString(existing)).isEqualTo("# Ops\n\nKept.\n\n" + BEGIN + "\nfigures\n" + END + "\n\nKept too.\n");

    Path missing = dir.resolve("sub/operations.md");
    Markers.write(missing, "## Capacity and cost\n\n" + BEGIN + "\n" + END + "\n", BEGIN, END, "figures\n");
    assertThat(Files.readString(missing)).isEqualTo("## Capacity and cost\n\n" + BEGIN + "\nfigures\n" + END + "\n");
  }
}
