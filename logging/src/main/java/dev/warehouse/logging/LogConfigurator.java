package dev.warehouse.logging;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.jul.LevelChangePropagator;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Logback's configuration, in code: Logback finds it through {@code ServiceLoader} at the first logger and
 * then skips its own configurators, so no XML is looked for or parsed (Joran's classes are never loaded: start-up
 * is measured in tenths of a second here). One appender, standard error (as java.util.logging's console handler
 * wrote before), one line per event in the format of {@link LogSettings#FORMAT}; java.util.logging, which
 * grpc-java and Netty log through, is routed into it.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class LogConfigurator extends ContextAwareBase implements Configurator {

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    // The one environment read outside a process's configuration record: this runs before main reads it.
    apply(context, LogSettings.lenient(System.getenv()));
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  static void apply(LoggerContext context, LogSettings settings) {
    // Levels set here are pushed down to java.util.logging's loggers, so a record below them is dropped there,
    // before the bridge builds an SLF4J event for it.
    LevelChangePropagator levels = new LevelChangePropagator();
    levels.setContext(context);
    levels.setResetJUL(true);
    levels.start();
    context.addListener(levels);

    LineEncoder encoder = new LineEncoder(settings.format());
    encoder.setContext(context);
    encoder.start();
    ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
    console.setContext(context);
    console.setName("console");
    console.setTarget("System.err");
    console.setEncoder(encoder);
    console.start();

    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.addAppender(console);
    root.setLevel(settings.level());

    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
  }
}
