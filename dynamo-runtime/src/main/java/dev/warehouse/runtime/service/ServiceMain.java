package dev.warehouse.runtime.service;

import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.server.JvmSetup;
import io.grpc.BindableService;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/** The body of every service's {@code main}: start, stop gracefully on SIGTERM or Ctrl-C, exit non-zero on failure. */
public final class ServiceMain {

  static {
    JvmSetup.configureLogging();
    JvmSetup.configureNetty();
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
