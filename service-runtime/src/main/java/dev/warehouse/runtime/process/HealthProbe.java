package dev.warehouse.runtime.process;

import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.tls.TransportSecurity;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/**
 * A container health check without extra tools: asks the local {@code grpc.health.v1} service and
 * exits 0 when SERVING, 1 otherwise. Usage: {@code java -cp app.jar dev.warehouse.runtime.process.HealthProbe PORT [SERVICE]}.
 * It reads the process's own TLS settings ({@code GRPC_TLS_MODE}, {@code TLS_*}) from the environment it
 * shares with the process, and with TLS presents the process's own certificate: health admits any
 * certificate the CA signed.
 */
public final class HealthProbe {

  private HealthProbe() {}

  public static void main(String[] args) throws Exception {
    JvmSetup.configureNetty(); // a probe's JVM lives a second: the JFR registration would be a good part of it
    if (args.length < 1) {
      System.err.println("usage: HealthProbe PORT [SERVICE]");
      System.exit(2);
    }
    ChannelCredentials credentials;
    try (TransportSecurity transport = TransportSecurity.load(TlsConfig.fromEnvironment(System.getenv()))) {
      credentials = transport.loopbackProbeCredentials();
    } catch (Exception e) {
      System.out.println("UNREACHABLE " + e.getMessage());
      System.exit(1);
      return;
    }
    System.exit(check(Integer.parseInt(args[0]), args.length > 1 ? args[1] : "", credentials));
  }

  /** 0 when {@code service} ("" for the whole server) on the local plaintext {@code port} is SERVING, 1 otherwise. */
  public static int check(int port, String service) throws InterruptedException {
    return check(port, service, InsecureChannelCredentials.create());
  }

  /** The same, over a channel with {@code credentials}. */
  public static int check(int port, String service, ChannelCredentials credentials) throws InterruptedException {
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port, credentials).build();
    try {
      ServingStatus serving = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.SECONDS)
          .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
      System.out.println(serving);
      return serving == ServingStatus.SERVING ? 0 : 1;
    } catch (RuntimeException e) {
      System.out.println("UNREACHABLE " + e.getMessage());
      return 1;
    } finally {
      channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
    }
  }
}
