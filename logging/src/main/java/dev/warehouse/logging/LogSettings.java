package dev.warehouse.logging;

import ch.qos.logback.classic.Level;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The two logging settings: {@value #FORMAT} ({@code json} or {@code text}) and {@value #LEVEL} (the least level
 * written: {@code trace}, {@code debug}, {@code info}, {@code warn}, {@code error}).
 */
public record LogSettings(LogFormat format, Level level) {

  public static final String FORMAT = "LOG_FORMAT";
  public static final String LEVEL = "LOG_LEVEL";
  public static final List<String> FORMATS = Arrays.stream(LogFormat.values()).map(LogFormat::settingValue).toList();
  public static final List<String> LEVELS = List.of("trace", "debug", "info", "warn", "error");
  public static final LogSettings DEFAULT = new LogSettings(LogFormat.JSON, Level.INFO);

  /**
   * The settings {@code env} gives, with the default in place of a value that is not one of the allowed ones.
   * Logback configures itself at the first logger, before a process's {@code main} has read its configuration;
   * that read (EnvReader) refuses a bad value and stops the start, so the default only ever covers the lines
   * written until then.
   */
  public static LogSettings lenient(Map<String, String> env) {
    String format = value(env, FORMAT);
    String level = value(env, LEVEL);
    return new LogSettings(
        FORMATS.contains(format) ? LogFormat.valueOf(format.toUpperCase(Locale.ROOT)) : DEFAULT.format(),
        LEVELS.contains(level) ? Level.toLevel(level) : DEFAULT.level());
  }

  private static String value(Map<String, String> env, String name) {
    String value = env.get(name);
    return value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
  }
}
