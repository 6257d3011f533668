package dev.warehouse.runtime.server;

/** What every process of ours sets before it logs or touches gRPC's Netty: the services, the gateway, their probes. */
public final class JvmSetup {

  private JvmSetup() {}

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
}
