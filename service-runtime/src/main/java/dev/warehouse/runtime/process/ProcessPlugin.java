package dev.warehouse.runtime.process;

import dev.warehouse.runtime.log.Fields;
import dev.warehouse.runtime.trace.Tracing;
import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * What one kind of process adds to the one assembly ({@link ServerProcess}): the DynamoDB-backed services add their
 * store, the gateway its backends. Everything else (the port, TLS, health, metrics, the stop) is the assembly's.
 */
public interface ProcessPlugin {

  /** The shared objects there are before the certificates are read. */
  record Early(PrometheusMeterRegistry registry, Clock clock, ExecutorService aside, Tracing tracing) {}

  /**
   * Starts what waits for nothing else on {@code early.aside()} (a client's classes and credentials, say), while the
   * start-up thread reads the certificates. Whatever it starts, {@link #plug} waits for, and closes on failure.
   */
  default void prepare(Early early) {}

  /**
   * Builds what the process serves from its shared objects. Whatever it opens goes in
   * {@link ProcessContext#resources()}, closed after the server has stopped.
   */
  Plugged plug(ProcessContext context) throws IOException;

  /** A start that failed after {@link #prepare}: closes what that started and {@link #plug} did not hand over. */
  default void abandon() {}

  /**
   * What the plug-in serves.
   *
   * @param services     its gRPC services, each with a route per method unless exempt ({@link GrpcServer})
   * @param interceptors run on each of them, after the process's call metrics, first listed first
   * @param builder      anything else the port needs (event loops, interceptors for every service)
   * @param clients      how the process's own client channels are secured, for the {@code listening} line
   * @param serving      told the server once it serves (a monitor that sets health, say)
   */
  record Plugged(List<BindableService> services, List<ServerInterceptor> interceptors,
      UnaryOperator<NettyServerBuilder> builder, Fields clients, Consumer<GrpcServer> serving) {

    public Plugged {
      services = List.copyOf(services);
      interceptors = List.copyOf(interceptors);
    }

    /** {@code services} with {@code interceptors}, and nothing else. */
    public static Plugged of(List<BindableService> services, List<ServerInterceptor> interceptors) {
      return new Plugged(services, interceptors, UnaryOperator.identity(), new Fields(), server -> {});
    }
  }
}
