package dev.warehouse.runtime.process;

import dev.warehouse.runtime.log.Events;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The body of every process's {@code main}: start, stop gracefully on SIGTERM or Ctrl-C, exit non-zero on failure. */
public final class ProcessMain {

  static {
    JvmSetup.configureLogging();
    JvmSetup.configureNetty();
  }

  private static final Logger log = LoggerFactory.getLogger(ProcessMain.class);

  /** Starts a process: what a {@code main} hands over. */
  @FunctionalInterface
  public interface Start {
    ServerProcess start() throws Exception;
  }

  private ProcessMain() {}

  /** Serves until the JVM is told to stop; a start that fails is logged and exits with status 1. */
  public static void serve(String name, Start start) {
    ServerProcess process;
    try {
      process = start.start();
    } catch (Exception | Error e) {
      Events.error(log, "start_failed").addKeyValue("service", name).setCause(e).log();
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(process::close, "graceful-shutdown"));
    try {
      process.awaitTermination();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
