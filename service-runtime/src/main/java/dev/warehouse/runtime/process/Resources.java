package dev.warehouse.runtime.process;

import dev.warehouse.runtime.log.Events;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.slf4j.LoggerFactory;

/** What a process's plug-in opens, closed when the process stops: last opened, first closed. */
public final class Resources {

  private final Deque<AutoCloseable> opened = new ConcurrentLinkedDeque<>();

  /** Closes {@code resource} when the process stops; returns it. */
  public <T extends AutoCloseable> T closeOnStop(T resource) {
    opened.push(resource);
    return resource;
  }

  /** Closes each, last opened first; one that fails to close is logged and the rest still closed. */
  void closeAll() {
    for (AutoCloseable resource = opened.poll(); resource != null; resource = opened.poll()) {
      try {
        resource.close();
      } catch (Exception e) {
        Events.warn(LoggerFactory.getLogger(Resources.class), "close_failed")
            .addKeyValue("resource", String.valueOf(resource)).setCause(e).log();
      }
    }
  }
}
