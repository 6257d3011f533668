package dev.warehouse.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.slf4j.LoggerFactory;
import org.slf4j.event.KeyValuePair;

/**
 * The events one logger writes while this is open, as Logback hands them to its appenders: what a test reads a
 * process's log lines from, field by field (the lines' JSON is the encoder's, tested on its own).
 */
public final class LogRecords implements AutoCloseable {

  private final Logger logger;
  private final List<Logged> events = new CopyOnWriteArrayList<>();
  private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent event) {
      events.add(Logged.of(event));
    }
  };

  /** Collects what the logger of {@code source} writes (at the levels it writes). */
  public LogRecords(Class<?> source) {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    logger = context.getLogger(source);
    appender.setContext(context);
    appender.setName("test-records");
    appender.start();
    logger.addAppender(appender);
  }

  /** The events so far, in order. */
  public List<Logged> events() {
    return List.copyOf(events);
  }

  /** Waits up to 5 s for {@code count} events (one may be written after the call that caused it ends). */
  public List<Logged> await(int count) {
    Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
        .until(events::size, size -> size >= count);
    return events();
  }

  public void clear() {
    events.clear();
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
  }

  /**
   * One event: its level ({@code INFO}, {@code WARN}, ...), message, key-value fields in order (a key given
   * twice counts once, as the encoder writes it), its throwable, if any, and the event itself (to encode it).
   */
  public record Logged(String level, String message, Map<String, Object> fields, Throwable error, ILoggingEvent raw) {

    static Logged of(ILoggingEvent event) {
      Map<String, Object> fields = new LinkedHashMap<>();
      if (event.getKeyValuePairs() != null) {
        for (KeyValuePair pair : event.getKeyValuePairs()) {
          fields.putIfAbsent(pair.key, pair.value);
        }
      }
      Throwable error = event.getThrowableProxy() instanceof ch.qos.logback.classic.spi.ThrowableProxy proxy
          ? proxy.getThrowable() : null;
      return new Logged(event.getLevel().toString(), event.getFormattedMessage(), Collections.unmodifiableMap(fields),
          error, event);
    }

    /** The {@code event} field: the event's name. */
    public String event() {
      Object name = fields.get("event");
      return name == null ? null : name.toString();
    }

    public Object field(String name) {
      return fields.get(name);
    }

    @Override
    public String toString() {
      return level + " " + fields + (error == null ? "" : " " + error);
    }
  }
}
