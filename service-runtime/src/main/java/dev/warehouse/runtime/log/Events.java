package dev.warehouse.runtime.log;

import org.slf4j.Logger;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Starts the log line of a named event, through SLF4J's fluent API:
 *
 * <pre>
 * Events.info(log, "draining").addKeyValue("drain_ms", drain.toMillis()).log();
 * Events.warn(log, "tls_reload_failed").addKeyValue("what", "ca").setCause(e).log();
 * </pre>
 *
 * The name is the line's {@code event} field (what alerts, runbooks and tests look for) and its message; each
 * key-value is a field of its own, escaped by the encoder, never spliced into a string. A line written while a
 * call is served also names the call's {@code request_id} and {@code caller} ({@link CallFields}).
 */
public final class Events {

  private Events() {}

  public static LoggingEventBuilder info(Logger log, String event) {
    return named(log.atInfo(), event);
  }

  public static LoggingEventBuilder warn(Logger log, String event) {
    return named(log.atWarn(), event);
  }

  public static LoggingEventBuilder error(Logger log, String event) {
    return named(log.atError(), event);
  }

  private static LoggingEventBuilder named(LoggingEventBuilder line, String event) {
    line.setMessage(event).addKeyValue("event", event);
    CallFields.addTo(line);
    return line;
  }
}
