package dev.warehouse.runtime.threads;

import java.util.concurrent.ThreadFactory;

/** Threads of a process's small background executors: named, for thread dumps, and never keeping the JVM up. */
public final class DaemonThreads {

  private DaemonThreads() {}

  public static ThreadFactory named(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }
}
