package dev.warehouse.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The benchmark report: Markdown for people, JSON for tools, written together. */
public final class Report {

  /**
   * Sections by heading, written in the order of their numbers ("1. ...", "2. ...", "10. ..."), whatever
   * order they ran in: as text, "10. ..." sorted between "1. ..." and "2. ...".
   */
  private final Map<String, StringBuilder> sections = new TreeMap<>(Report::byNumber);
  private final Map<String, Object> json = new LinkedHashMap<>();
  /** Text added before any heading goes first. */
  private StringBuilder markdown = sections.computeIfAbsent("", t -> new StringBuilder());

  /** Starts the section with this heading, or continues it when a scenario adds to it later. */
  public Report heading(String title) {
    markdown = sections.computeIfAbsent(title, t -> new StringBuilder("\n## " + t + "\n\n"));
    return this;
  }

  public Report paragraph(String text) {
    markdown.append(text).append("\n\n");
    return this;
  }

  public Report table(List<String> headers, List<List<String>> rows) {
    markdown.append("| ").append(String.join(" | ", headers)).append(" |\n|");
    headers.forEach(h -> markdown.append("---|"));
    markdown.append('\n');
    rows.forEach(r -> markdown.append("| ").append(String.join(" | ", r)).append(" |\n"));
    markdown.append('\n');
    return this;
  }

  /** Adds a value to the JSON document under {@code key}. */
  public Report data(String key, Object value) {
    json.put(key, value);
    return this;
  }

  public String markdown() {
    return String.join("", sections.values());
  }

  /** Makes each file's folder first: the JSON's, under {@code target/}, is not there after a clean. */
  public void write(Path markdownFile, Path jsonFile, String preamble) throws IOException {
    Files.createDirectories(markdownFile.toAbsolutePath().getParent());
    Files.createDirectories(jsonFile.toAbsolutePath().getParent());
    Files.writeString(markdownFile, preamble + markdown());
    Files.writeString(jsonFile, toJson(json, "") + "\n");
  }

  /** Headings by their leading number, then as text; the untitled part ("") first. */
  static int byNumber(String a, String b) {
    int byNumber = Long.compare(number(a), number(b));
    return byNumber != 0 ? byNumber : a.compareTo(b);
  }

  /** The digits a heading starts with, -1 when it has none (the untitled part). */
  private static long number(String heading) {
    int end = 0;
    while (end < heading.length() && end < 18 && Character.isDigit(heading.charAt(end))) {
      end++;
    }
    return end == 0 ? -1 : Long.parseLong(heading.substring(0, end));
  }

  public static String ms(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }

  public static String num(double value) {
    return String.format(Locale.ROOT, value >= 100 ? "%.0f" : "%.2f", value);
  }

  @SuppressWarnings("unchecked")
  static String toJson(Object value, String indent) {
    if (value == null) {
      return "null";
    } else if (value instanceof Number || value instanceof Boolean) {
      return value instanceof Double d && (d.isNaN() || d.isInfinite()) ? "null" : value.toString();
    } else if (value instanceof Map<?, ?> map) {
      List<String> entries = new ArrayList<>();
      String inner = indent + "  ";
      map.forEach((k, v) -> entries.add(inner + quote(k.toString()) + ": " + toJson(v, inner)));
      return entries.isEmpty() ? "{}" : "{\n" + String.join(",\n", entries) + "\n" + indent + "}";
    } else if (value instanceof List<?> list) {
      List<String> items = new ArrayList<>();
      String inner = indent + "  ";
      list.forEach(v -> items.add(inner + toJson(v, inner)));
      return items.isEmpty() ? "[]" : "[\n" + String.join(",\n", items) + "\n" + indent + "]";
    } else if (value instanceof Record record) {
      Map<String, Object> fields = new LinkedHashMap<>();
      for (var component : record.getClass().getRecordComponents()) {
        try {
          fields.put(component.getName(), component.getAccessor().invoke(record));
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException(e);
        }
      }
      return toJson(fields, indent);
    }
    return quote(value.toString());
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }
}
