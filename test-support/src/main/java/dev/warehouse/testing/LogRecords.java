package dev.warehouse.testing;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.awaitility.Awaitility;

/** The records one logger publishes while this is open: what a test reads a process's log lines from. */
public final class LogRecords implements AutoCloseable {

  private final Logger logger; // held: loggers are weakly kept
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();
  private final Handler handler = new Handler() {
    @Override
    public void publish(LogRecord record) {
      records.add(record);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  /** Collects what the logger of {@code source} publishes. */
  public LogRecords(Class<?> source) {
    this.logger = Logger.getLogger(source.getName());
    logger.addHandler(handler);
  }

  public List<LogRecord> records() {
    return List.copyOf(records);
  }

  /** The messages so far, in order. */
  public List<String> lines() {
    return records.stream().map(LogRecord::getMessage).toList();
  }

  /** Waits up to 5 s for {@code count} lines (a line may be written after the call that caused it ends). */
  public List<String> await(int count) {
    Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
        .until(records::size, size -> size >= count);
    return lines();
  }

  public void clear() {
    records.clear();
  }

  @Override
  public void close() {
    logger.removeHandler(handler);
  }
}
