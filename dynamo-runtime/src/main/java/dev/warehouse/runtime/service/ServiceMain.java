package dev.warehouse.runtime.service;

import dev.warehouse.runtime.audit.AuditCommand;
import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.server.JvmSetup;
import io.grpc.BindableService;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The body of every service's {@code main}: start, stop gracefully on SIGTERM or Ctrl-C, exit non-zero on failure. */
public final class ServiceMain {

  static {
    JvmSetup.configureLogging();
    JvmSetup.configureNetty();
  }

  private static final Logger log = LoggerFactory.getLogger(ServiceMain.class);

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
      Events.error(log, "start_failed").addKeyValue("service", config.serviceName()).setCause(e).log();
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
