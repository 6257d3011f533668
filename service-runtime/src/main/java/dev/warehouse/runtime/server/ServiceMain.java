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
    configureNetty();
  }

  /** The system property of gRPC's Netty (shaded under {@code io.grpc.netty.shaded}) that turns its JFR events on. */
  static final String NETTY_JFR = "io.grpc.netty.shaded.io.netty.jfr.enabled";

  /** One line per log record, key=value messages, and shutdown lines that are not lost. Call before any logging. */
  public static void configureLogging() {
    if (System.getProperty("java.util.logging.manager") == null) {
      System.setProperty("java.util.logging.manager", ShutdownSafeLogManager.class.getName());
    }
    if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$s %3$s %5$s%6$s%n");
    }
  }

  /**
   * Netty's allocator has JFR events, which record nothing unless a recording turns them on, but which
   * register with JFR when Netty allocates its first buffer: 0.1 to 0.2 s of every start, and outside the
   * class-data-sharing archive (JFR event classes never go in). Off, unless {@code -D}{@value #NETTY_JFR}{@code =true}
   * says otherwise. Call before anything uses gRPC's Netty.
   */
  public static void configureNetty() {
    if (System.getProperty(NETTY_JFR) == null) {
      System.setProperty(NETTY_JFR, "false");
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
