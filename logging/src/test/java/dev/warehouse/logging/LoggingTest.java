package dev.warehouse.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class LoggingTest {

  /** Stands for the audit trail: a logger whose lines are a record. */
  private static final class Record {}

  @Test
  void alwaysWritten_staysAtInfo_whenLogLevelTurnsTheRestDown() {
    Logging.start();
    Logger root = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Level before = root.getLevel();
    root.setLevel(Level.ERROR); // as LOG_LEVEL=error sets it
    try {
      assertThat(Logging.alwaysWritten(Record.class).isInfoEnabled()).isTrue();
      assertThat(Logging.alwaysWritten(Record.class).isDebugEnabled()).isFalse();
      assertThat(LoggerFactory.getLogger("dev.warehouse.test.Diagnostics").isWarnEnabled()).isFalse();
    } finally {
      root.setLevel(before);
    }
  }
}
