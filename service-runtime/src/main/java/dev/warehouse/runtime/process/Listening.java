package dev.warehouse.runtime.process;

import dev.warehouse.runtime.process.ProcessSettings;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.log.Fields;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TransportSecurity;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up line that says how each port of a process is reached (address and transport), and a
 * warning when plaintext gRPC listens beyond loopback, where anyone who can reach the port can call it.
 */
public final class Listening {

  private static final Logger log = LoggerFactory.getLogger(Listening.class);

  private Listening() {}

  /**
   * @param clients how the process's own client channels are secured (none when it has none), e.g.
   *                {@code backend_tls_mode=mtls ...}
   */
  public static void log(String service, String grpcBindAddress, int grpcPort, TransportSecurity transport,
      String metricsAddress, Fields clients) {
    new Fields().add("service", service).add("grpc_address", grpcBindAddress + ":" + grpcPort)
        .addAll(transport.describeServer()).add("metrics_address", metricsAddress)
        .add("metrics_transport", "plaintext-http").addAll(clients)
        .addTo(Events.info(log, "listening")).log();
    if (transport.config().serverMode() == TlsMode.PLAINTEXT && !loopback(grpcBindAddress)) {
      Events.warn(log, "plaintext_grpc_beyond_loopback").addKeyValue("service", service)
          .addKeyValue("grpc_address", grpcBindAddress + ":" + grpcPort)
          .addKeyValue("detail", "anyone who can reach this port can call it: set GRPC_TLS_MODE=mtls, or "
              + "GRPC_BIND_ADDRESS=127.0.0.1").log();
    }
  }

  public static void log(String service, String grpcBindAddress, int grpcPort, TransportSecurity transport,
      String metricsAddress) {
    log(service, grpcBindAddress, grpcPort, transport, metricsAddress, new Fields());
  }

  private static boolean loopback(String bindAddress) {
    if (bindAddress.equals(ProcessSettings.ALL_INTERFACES)) {
      return false;
    }
    try {
      return InetAddress.getByName(bindAddress).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false; // the bind itself failed already
    }
  }
}
