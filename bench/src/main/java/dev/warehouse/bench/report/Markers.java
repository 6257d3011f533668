package dev.warehouse.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A generated part of a hand-written document: the text between a begin and an end marker (HTML
 * comments, invisible when rendered), replaced whole, everything around it kept as it is.
 */
public final class Markers {

  private Markers() {}

  /**
   * {@code document} with what lies between {@code begin} and {@code end} replaced by {@code content};
   * the markers stay. Fails when either marker is missing, or they are out of order: the tool must not
   * guess where operators' text ends.
   */
  public static String replace(String document, String begin, String end, String content) {
    int from = document.indexOf(begin);
    int to = document.indexOf(end);
    if (from < 0 || to < 0 || to < from + begin.length()) {
      throw new IllegalArgumentException("the document has no " + begin + " … " + end + " section");
    }
    if (document.indexOf(begin, from + 1) >= 0 || document.indexOf(end, to + 1) >= 0) {
      throw new IllegalArgumentException("the document has more than one " + begin + " … " + end + " section");
    }
    String body = content.endsWith("\n") ? content : content + "\n";
    return document.substring(0, from + begin.length()) + "\n" + body + document.substring(to);
  }

  /** Replaces the section in {@code file}; a missing file is created holding {@code skeleton} first. */
  public static void write(Path file, String skeleton, String begin, String end, String content) throws IOException {
    String document = Files.exists(file) ? Files.readString(file) : skeleton;
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, replace(document, begin, end, content));
  }
}
