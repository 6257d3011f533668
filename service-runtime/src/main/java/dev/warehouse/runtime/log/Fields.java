package dev.warehouse.runtime.log;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Named values in order, such as a process's settings: the fields of one log line ({@link #addTo}), or, as
 * {@link #toString}, {@code key=value key=value} for a person or a test to read.
 */
public final class Fields {

  private final Map<String, Object> values = new LinkedHashMap<>();

  public Fields add(String key, Object value) {
    values.put(key, value);
    return this;
  }

  public Fields addAll(Fields other) {
    values.putAll(other.values);
    return this;
  }

  public Map<String, Object> asMap() {
    return Collections.unmodifiableMap(values);
  }

  /** Adds every field to {@code line}, in order. */
  public LoggingEventBuilder addTo(LoggingEventBuilder line) {
    values.forEach(line::addKeyValue);
    return line;
  }

  @Override
  public String toString() {
    return values.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" "));
  }
}
