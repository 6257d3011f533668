package dev.warehouse.gateway.auth;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Collects the audit trail's lines while open. */
final class AuditLines implements AutoCloseable {

  private final Logger logger = Logger.getLogger(AuditTrail.class.getName()); // held: loggers are weakly kept
  private final List<String> lines = new CopyOnWriteArrayList<>();
  private final Handler handler = new Handler() {
    @Override
    public void publish(LogRecord record) {
      lines.add(record.getMessage());
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  AuditLines() {
    logger.addHandler(handler);
  }

  List<String> lines() {
    return List.copyOf(lines);
  }

  /** Waits briefly for {@code count} lines: a line is written when its call closes, which a client may hear of first. */
  List<String> await(int count) throws InterruptedException {
    long giveUp = System.nanoTime() + 5_000_000_000L;
    while (lines.size() < count && System.nanoTime() < giveUp) {
      Thread.sleep(10);
    }
    return lines();
  }

  void clear() {
    lines.clear();
  }

  @Override
  public void close() {
    logger.removeHandler(handler);
  }
}
