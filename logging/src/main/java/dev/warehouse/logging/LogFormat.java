package dev.warehouse.logging;

import java.util.Locale;

/** How a process writes its log lines ({@code LOG_FORMAT}). */
public enum LogFormat {
  /** One JSON object per line: what a log pipeline reads. The default. */
  JSON,
  /** One readable line, {@code ts LEVEL logger event=… key=value …}: for a person at a terminal ({@code ./run.sh}). */
  TEXT;

  /** The value of {@code LOG_FORMAT} that selects it. */
  public String settingValue() {
    return name().toLowerCase(Locale.ROOT);
  }
}
