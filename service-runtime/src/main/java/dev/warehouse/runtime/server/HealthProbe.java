package dev.warehouse.runtime.server;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/**
 * A container health check without extra tools: asks the local {@code grpc.health.v1} service and
 * exits 0 when SERVING, 1 otherwise. Usage: {@code java -cp app.jar dev.warehouse.runtime.server.HealthProbe PORT [SERVICE]}.
 */
public final class HealthProbe {

  private HealthProbe() {}

  public static void main(String[] args) throws InterruptedException {
    if (args.length < 1) {
      System.err.println("usage: HealthProbe PORT [SERVICE]");
      System.exit(2);
    }
    System.exit(check(Integer.parseInt(args[0]), args.length > 1 ? args[1] : ""));
  }

  /** 0 when {@code service} ("" for the whole server) on the local {@code port} is SERVING, 1 otherwise. */
  public static int check(int port, String service) throws InterruptedException {
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
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
