package dev.warehouse.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {

  @Test
  void writesSectionsInTheOrderOfTheirNumbers_notAsText() {
    Report report = new Report();
    report.paragraph("preamble");
    report.heading("10. Overload").paragraph("ten");
    report.heading("2. Gateway").paragraph("two");
    report.heading("1. Layers").paragraph("one");
    report.heading("9. Buying stock").paragraph("nine");

    String markdown = report.markdown();

    assertThat(markdown).startsWith("preamble");
    assertThat(markdown.indexOf("## 1. Layers")).isLessThan(markdown.indexOf("## 2. Gateway"));
    assertThat(markdown.indexOf("## 2. Gateway")).isLessThan(markdown.indexOf("## 9. Buying stock"));
    assertThat(markdown.indexOf("## 9. Buying stock")).isLessThan(markdown.indexOf("## 10. Overload"));
  }

  @Test
  void continuesASectionWhenItsHeadingComesAgain() {
    Report report = new Report();
    report.heading("10. Overload").paragraph("moto");
    report.heading("1. Layers").paragraph("layers");
    report.heading("10. Overload").paragraph("stand-in");

    assertThat(report.markdown()).containsOnlyOnce("## 10. Overload").contains("moto\n\nstand-in");
  }

  @Test
  void write_putsTheJsonInAFolderOfItsOwn_evenOneThatIsNotThereYet(@TempDir Path root) throws IOException {
    Report report = new Report();
    report.heading("1. Layers").paragraph("one").data("took_seconds", 42);

    report.write(root.resolve("docs/benchmarks.md"), root.resolve("target/benchmarks.json"), "# Benchmarks\n");

    assertThat(Files.readString(root.resolve("docs/benchmarks.md"))).startsWith("# Benchmarks\n").contains("## 1. Layers");
    assertThat(Files.readString(root.resolve("target/benchmarks.json"))).isEqualTo("{\n  \"took_seconds\": 42\n}\n");
  }
}
