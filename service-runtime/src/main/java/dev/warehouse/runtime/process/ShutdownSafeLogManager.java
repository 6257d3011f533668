package dev.warehouse.runtime.process;

import java.util.logging.LogManager;

/**
 * JUL's own shutdown hook resets logging while ours is still draining calls, which would swallow the
 * shutdown log lines. This manager ignores resets once the JVM is shutting down.
 */
public final class ShutdownSafeLogManager extends LogManager {

  @Override
  public void reset() {
    if (!shuttingDown()) {
      super.reset();
    }
  }

  private static boolean shuttingDown() {
    try {
      Thread probe = new Thread(() -> { });
      Runtime.getRuntime().addShutdownHook(probe);
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException e) {
      return true;
    }
  }
}
