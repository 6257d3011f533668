package dev.warehouse.logging;

import ch.qos.logback.classic.Level;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The start of every process's logging. */
public final class Logging {

  private Logging() {}

  /**
   * Configures Logback now ({@link LogConfigurator}) rather than at the first SLF4J logger: what is logged
   * through java.util.logging before that (grpc-java, Netty) reaches the same lines only once the bridge is
   * installed. Call first in {@code main}; calling it again does nothing.
   */
  public static void start() {
    LoggerFactory.getILoggerFactory();
  }

  /**
   * The logger of {@code source}, written at INFO and above whatever {@code LOG_LEVEL} says: for lines that are
   * a record rather than diagnostics (the gateway's audit trail), which turning the log down must not lose.
   */
  public static Logger alwaysWritten(Class<?> source) {
    Logger logger = LoggerFactory.getLogger(source);
    if (logger instanceof ch.qos.logback.classic.Logger logback) {
      logback.setLevel(Level.INFO);
    }
    return logger;
  }
}
