package dev.warehouse.runtime.process;

import dev.warehouse.logging.Logging;
import dev.warehouse.runtime.log.Events;
import java.util.List;
import org.slf4j.LoggerFactory;

/** What every process of ours sets before it logs or touches gRPC's Netty: the services, the gateway, their probes. */
public final class JvmSetup {

  private JvmSetup() {}

  /** The system property of gRPC's Netty (shaded under {@code io.grpc.netty.shaded}) that turns its JFR events on. */
  static final String NETTY_JFR = "io.grpc.netty.shaded.io.netty.jfr.enabled";
  /** gRPC's Netty's and the DynamoDB client's Netty's switch for {@code sun.misc.Unsafe}. */
  static final List<String> NETTY_NO_UNSAFE = List.of("io.grpc.netty.shaded.io.netty.noUnsafe", "io.netty.noUnsafe");

  /**
   * One line per log record, JSON or text ({@code LOG_FORMAT}), java.util.logging's records among them, and
   * shutdown lines that are not lost. Call before any logging.
   */
  public static void configureLogging() {
    // Before java.util.logging starts: its own shutdown hook would otherwise remove the bridge to SLF4J while
    // ours still drains calls, and grpc-java's last records would be lost.
    byDefault("java.util.logging.manager", ShutdownSafeLogManager.class.getName());
    Logging.start();
    // An exception nobody caught (a configuration main refused, say) is a line like every other, not a bare
    // stack trace in the middle of the JSON.
    if (Thread.getDefaultUncaughtExceptionHandler() == null) {
      Thread.setDefaultUncaughtExceptionHandler((thread, e) ->
          Events.error(LoggerFactory.getLogger(JvmSetup.class), "uncaught_exception").setCause(e).log());
    }
  }

  /**
   * Netty's allocator has JFR events, which record nothing unless a recording turns them on, but which
   * register with JFR when Netty allocates its first buffer: 0.1 to 0.2 s of every start, and outside the
   * class-data-sharing archive (JFR event classes never go in). Off, unless {@code -D}{@value #NETTY_JFR}{@code =true}
   * says otherwise. Call before anything uses gRPC's Netty.
   */
  public static void configureNetty() {
    byDefault(NETTY_JFR, "false");
    // From JDK 25 Netty leaves sun.misc.Unsafe alone unless told, and frees its direct buffers through a downcall it
    // links with the foreign-function API at its first buffer: some 0.1 s of every start spent spinning method
    // handles, and buffers slower than Unsafe's. The JDK still allows Unsafe's memory access (JEP 471 and 498 warn
    // once); Netty checks that it works and goes without when a later JDK refuses (docs/performance-log.md).
    NETTY_NO_UNSAFE.forEach(noUnsafe -> byDefault(noUnsafe, "false"));
  }

  /** Sets a system property the command line left unset: what a process does unless told otherwise. */
  private static void byDefault(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }
}
