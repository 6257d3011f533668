package dev.warehouse.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.encoder.EncoderBase;
import ch.qos.logback.core.encoder.JsonEscapeUtil;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.slf4j.event.KeyValuePair;

/**
 * One log event, one line, in either format, with the same fields in the same order in every process:
 * {@code ts}, {@code level}, {@code logger}, {@code thread}, {@code event}, {@code msg}, then the event's own
 * key-value pairs (SLF4J's {@code addKeyValue}) at the top level, then {@code error} ({@code class: message})
 * and {@code stack_trace} when it carries a throwable.
 *
 * <pre>
 * {"ts":"2026-07-26T10:00:10.000Z","level":"INFO","logger":"dev.warehouse.runtime.process.GrpcServer","thread":"graceful-shutdown","event":"draining","msg":"draining","drain_ms":1500}
 * 2026-07-26T10:00:10.000Z INFO dev.warehouse.runtime.process.GrpcServer event=draining drain_ms=1500
 * </pre>
 *
 * Values come from callers and exceptions, so every one is escaped: in JSON as a JSON string (numbers and
 * booleans stay numbers and booleans), in text quoted with the same escapes unless it is plain. No value can
 * end a line or add a field. A key given twice is written once, the first time: JSON parsers disagree about
 * which of two equal keys wins.
 */
public final class LineEncoder extends EncoderBase<ILoggingEvent> {

  /** The fields every line may have before the event's own; an event's key-value pair of one of these names is dropped. */
  private static final List<String> RESERVED = List.of("ts", "level", "logger", "thread", "event", "msg", "error",
      "stack_trace");
  /** A text value written as it is; any other is quoted. */
  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._:/@+#,\\[\\]-]+");

  private final LogFormat format;

  public LineEncoder(LogFormat format) {
    this.format = format;
  }

  @Override
  public byte[] headerBytes() {
    return null;
  }

  @Override
  public byte[] footerBytes() {
    return null;
  }

  @Override
  public byte[] encode(ILoggingEvent event) {
    return line(event).getBytes(StandardCharsets.UTF_8);
  }

  /** The line of {@code event}, its newline included. */
  public String line(ILoggingEvent event) {
    Line line = format == LogFormat.JSON ? new JsonLine() : new TextLine();
    line.field("ts", timestamp(event.getTimeStamp()));
    line.field("level", event.getLevel().toString());
    line.field("logger", event.getLoggerName());
    if (format == LogFormat.JSON) { // a terminal's reader rarely wants it, a pipeline's often does
      line.field("thread", event.getThreadName());
    }
    List<KeyValuePair> pairs = event.getKeyValuePairs() == null ? List.of() : event.getKeyValuePairs();
    String name = pairs.stream().filter(pair -> "event".equals(pair.key) && pair.value != null).findFirst()
        .map(pair -> String.valueOf(pair.value)).orElse(null);
    String message = event.getFormattedMessage();
    if (name != null) {
      line.field("event", name);
    }
    // The helpers set the message to the event's name: a text line says it once.
    if (format == LogFormat.JSON || name == null || !name.equals(message)) {
      line.field("msg", message == null ? "" : message);
    }
    Set<String> written = new HashSet<>(RESERVED);
    for (KeyValuePair pair : pairs) {
      if (pair.key != null && written.add(pair.key)) {
        line.field(pair.key, pair.value);
      }
    }
    IThrowableProxy thrown = event.getThrowableProxy();
    if (thrown != null) {
      line.field("error", thrown.getMessage() == null ? thrown.getClassName() : thrown.getClassName() + ": " + thrown.getMessage());
      line.field("stack_trace", ThrowableProxyUtil.asString(thrown));
    }
    return line.end();
  }

  /** {@code 2026-07-26T10:00:10.000Z}: UTC, always to the millisecond, so that lines sort and align. */
  static String timestamp(long epochMillis) {
    LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(epochMillis, 1000), 0, ZoneOffset.UTC);
    StringBuilder out = new StringBuilder(24);
    out.append(t.getYear()).append('-');
    pad(out, t.getMonthValue(), 2).append('-');
    pad(out, t.getDayOfMonth(), 2).append('T');
    pad(out, t.getHour(), 2).append(':');
    pad(out, t.getMinute(), 2).append(':');
    pad(out, t.getSecond(), 2).append('.');
    return pad(out, (int) Math.floorMod(epochMillis, 1000), 3).append('Z').toString();
  }

  private static StringBuilder pad(StringBuilder out, int value, int width) {
    String digits = Integer.toString(value);
    out.append("0".repeat(Math.max(0, width - digits.length()))).append(digits);
    return out;
  }

  /**
   * Appends {@code value} escaped as the inside of a JSON string. Logback's utility escapes what JSON requires
   * (quotes, backslashes, U+0000 to U+001F); beyond it, the solidus it escapes too (allowed, never required) is
   * written plain, so method names and URIs read and grep as they are, and DEL, the C1 controls, U+2028/U+2029
   * (line breaks to some readers) and unpaired surrogates (which UTF-8 cannot carry) are escaped as well.
   */
  static void escape(StringBuilder out, String value) {
    String escaped = JsonEscapeUtil.jsonEscapeString(value);
    for (int i = 0; i < escaped.length(); i++) {
      char c = escaped.charAt(i);
      if (c == '\\' && i + 1 < escaped.length()) {
        char next = escaped.charAt(++i);
        if (next != '/') {
          out.append('\\');
        }
        out.append(next);
      } else if ((c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029' || unpaired(escaped, i)) {
        out.append("\\u").append(String.format(Locale.ROOT, "%04x", (int) c));
      } else {
        out.append(c);
      }
    }
  }

  private static boolean unpaired(String s, int i) {
    char c = s.charAt(i);
    if (Character.isHighSurrogate(c)) {
      return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
    }
    return Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1)));
  }

  /** A line being written, field by field. */
  private interface Line {
    void field(String key, Object value);

    String end();
  }

  /** {@code {"key":value,...}} */
  private static final class JsonLine implements Line {
    private final StringBuilder out = new StringBuilder(256).append('{');

    @Override
    public void field(String key, Object value) {
      if (out.length() > 1) {
        out.append(',');
      }
      out.append('"');
      escape(out, key);
      out.append("\":");
      if (value == null) {
        out.append("null");
      } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long || value instanceof Short
          || value instanceof Byte || value instanceof BigInteger || value instanceof BigDecimal) {
        out.append(value);
      } else if ((value instanceof Double || value instanceof Float) && Double.isFinite(((Number) value).doubleValue())) {
        out.append(value);
      } else { // a string, or anything else as its string (NaN and infinities too: JSON has no such number)
        out.append('"');
        escape(out, String.valueOf(value));
        out.append('"');
      }
    }

    @Override
    public String end() {
      return out.append("}\n").toString();
    }
  }

  /** {@code ts LEVEL logger key=value ...}: a value that is not plain is quoted, with JSON's escapes. */
  private static final class TextLine implements Line {
    private final StringBuilder out = new StringBuilder(256);
    private int fields;

    @Override
    public void field(String key, Object value) {
      if (fields++ > 0) {
        out.append(' ');
      }
      if (fields > 3) { // after ts, level and logger, which are written bare
        text(key);
        out.append('=');
      }
      text(String.valueOf(value));
    }

    private void text(String value) {
      if (PLAIN.matcher(value).matches()) {
        out.append(value);
      } else {
        out.append('"');
        escape(out, value);
        out.append('"');
      }
    }

    @Override
    public String end() {
      return out.append('\n').toString();
    }
  }
}
