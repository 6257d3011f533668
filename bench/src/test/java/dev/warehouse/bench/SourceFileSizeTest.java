package dev.warehouse.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every source file of the bench module, main and test, at most {@value #MAX_LINES} lines: past that a file
 * has usually taken on a second job, and a scenario keeps driving the load, sampling and rendering apart.
 */
class SourceFileSizeTest {

  static final int MAX_LINES = 400;
  private static final Path ROOT = Path.of(System.getProperty("project.root", "..")).toAbsolutePath().normalize();
  private static final Path SOURCES = ROOT.resolve("bench/src");

  @Test
  void everySourceFile_isAtMostTheLimit() throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(SOURCES)) {
      files = walk.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    }
    // Found from the wrong folder, no file would be too long.
    assertThat(files).contains(SOURCES.resolve("test/java/dev/warehouse/bench/SourceFileSizeTest.java"));

    List<String> tooLong = files.stream().filter(f -> lines(f) > MAX_LINES)
        .map(f -> ROOT.relativize(f) + " (" + lines(f) + " lines)").toList();
    assertThat(tooLong).as("bench source files over %d lines; cut each into parts with one job each", MAX_LINES)
        .isEmpty();
  }

  private static int lines(Path file) {
    try {
      return Files.readAllLines(file).size();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
