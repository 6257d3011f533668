package dev.warehouse.logging;

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
}
