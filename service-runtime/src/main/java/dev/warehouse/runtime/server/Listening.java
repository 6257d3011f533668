package dev.warehouse.runtime.server;

import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TransportSecurity;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.logging.Logger;

/**
 * The start-up line that says how each port of a process is reached (address and transport), and a
 * warning when plaintext gRPC listens beyond loopback, where anyone who can reach the port can call it.
 */
public final class Listening {

  private static final Logger log = Logger.getLogger(Listening.class.getName());

  private Listening() {}

  /**
   * @param clients how the process's own client channels are secured ("" when it has none), e.g.
   *                {@code backend_tls_mode=mtls ...}
   */
  public static void log(String service, String grpcBindAddress, int grpcPort, TransportSecurity transport,
      String metricsAddress, String clients) {
    log.info("event=listening service=" + service
        + " grpc_address=" + grpcBindAddress + ":" + grpcPort + " " + transport.describeServer()
        + " metrics_address=" + metricsAddress + " metrics_transport=plaintext-http"
        + (clients.isEmpty() ? "" : " " + clients));
    if (transport.config().serverMode() == TlsMode.PLAINTEXT && !loopback(grpcBindAddress)) {
      log.warning("event=plaintext_grpc_beyond_loopback service=" + service + " grpc_address=" + grpcBindAddress + ":"
          + grpcPort + " detail=\"anyone who can reach this port can call it: set GRPC_TLS_MODE=mtls, or "
          + "GRPC_BIND_ADDRESS=127.0.0.1\"");
    }
  }

  public static void log(String service, String grpcBindAddress, int grpcPort, TransportSecurity transport,
      String metricsAddress) {
    log(service, grpcBindAddress, grpcPort, transport, metricsAddress, "");
  }

  private static boolean loopback(String bindAddress) {
    if (bindAddress.equals(ServiceConfig.ALL_INTERFACES)) {
      return false;
    }
    try {
      return InetAddress.getByName(bindAddress).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false; // the bind itself failed already
    }
  }
}
