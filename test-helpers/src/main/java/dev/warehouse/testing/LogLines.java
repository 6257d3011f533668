package dev.warehouse.testing;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A process's JSON log lines (its standard error, one object per line), read back for a test: each line as its
 * fields, strings as strings, numbers as numbers. A line that is not a JSON object (the JVM's own warnings,
 * another tool's output in the same file) is left out.
 */
public final class LogLines {

  private LogLines() {}

  /** Every JSON line of {@code output}, in order. */
  public static List<Map<String, Object>> parse(String output) {
    List<Map<String, Object>> lines = new ArrayList<>();
    for (String line : output.split("\n")) {
      if (!line.startsWith("{")) {
        continue;
      }
      JsonElement parsed;
      try {
        parsed = JsonParser.parseString(line);
      } catch (RuntimeException notJson) {
        continue;
      }
      if (parsed.isJsonObject()) {
        lines.add(fields(parsed.getAsJsonObject()));
      }
    }
    return lines;
  }

  /** The lines of {@code output} whose {@code event} field is {@code event}. */
  public static List<Map<String, Object>> events(String output, String event) {
    return parse(output).stream().filter(line -> event.equals(line.get("event"))).toList();
  }

  /** {@code output} from its last line of {@code event} on (that line included): one run's lines in a file of several. */
  public static List<Map<String, Object>> fromLast(String output, String event) {
    List<Map<String, Object>> lines = parse(output);
    int last = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (event.equals(lines.get(i).get("event"))) {
        last = i;
      }
    }
    return last < 0 ? List.of() : lines.subList(last, lines.size());
  }

  private static Map<String, Object> fields(JsonObject object) {
    Map<String, Object> fields = new LinkedHashMap<>();
    object.entrySet().forEach(e -> fields.put(e.getKey(), value(e.getValue())));
    return fields;
  }

  private static Object value(JsonElement element) {
    if (element.isJsonNull()) {
      return null;
    }
    if (element.isJsonPrimitive()) {
      JsonPrimitive primitive = element.getAsJsonPrimitive();
      if (primitive.isBoolean()) {
        return primitive.getAsBoolean();
      }
      if (primitive.isNumber()) {
        double number = primitive.getAsDouble();
        return number == Math.rint(number) && Math.abs(number) < 1e15 ? (Object) (long) number : (Object) number;
      }
      return primitive.getAsString();
    }
    return element.toString();
  }
}
