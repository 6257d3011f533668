package dev.warehouse.runtime.server;

import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.config.ServiceConfig;
import io.grpc.BindableService;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/** The body of every service's {@code main}: start, stop gracefully on SIGTERM or Ctrl-C, exit non-zero on failure. */
public final class ServiceMain {

  static {
    configureLogging();
  }

  /** One line per log record, key=value messages, and shutdown lines that are not lost. Call before any logging. */
  public static void configureLogging() {
    if (System.getProperty("java.util.logging.manager") == null) {
      System.setProperty("java.util.logging.manager", ShutdownSafeLogManager.class.getName());
    }
    if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$s %3$s %5$s%6$s%n");
    }
  }

  private static final Logger log = Logger.getLogger(ServiceMain.class.getName());

  private ServiceMain() {}

  /**
   * A service's {@code main}: with the arguments {@code audit [options]}, runs its consistency audit and
   * exits with the audit's status; otherwise serves.
   */
  public static void run(String[] args, ServiceConfig config, Function<ServiceContext, List<BindableService>> services,
      AuditCommand.Line audit) {
    if (args.length > 0 && args[0].equals("audit")) {
      System.exit(audit.run(config, Arrays.copyOfRange(args, 1, args.length), System.out));
    }
    run(config, services);
  }

  public static void run(ServiceConfig config, Function<ServiceContext, List<BindableService>> services) {
    ServiceProcess process;
    try {
      process = ServiceProcess.start(config, services, List.of());
    } catch (Exception | Error e) {
      log.log(Level.SEVERE, "event=start_failed service=" + config.serviceName(), e);
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
