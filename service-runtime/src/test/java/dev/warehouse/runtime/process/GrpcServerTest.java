package dev.warehouse.runtime.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.testing.Patience;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("integration")
class GrpcServerTest {

  @Test
  void refusesToStart_whenAServiceHasAnRpcWithoutRoute() {
    assertThatThrownBy(() -> new GrpcServer(InProcessServerBuilder.forName("no-routes"),
            List.of(new HealthGrpc.HealthImplBase() {}), List.of(), Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("every RPC must declare its route");
  }

  @Test
  void servesTheAdminService_whoseRpcsReadNoTable_withoutRoutes() throws Exception {
    assertThat(GrpcServer.ROUTE_EXEMPT).containsExactly(AdminServiceGrpc.SERVICE_NAME);
    GrpcServer server = new GrpcServer(InProcessServerBuilder.forName("admin-only"),
        List.of(new AdminServiceGrpc.AdminServiceImplBase() {}), List.of(), Duration.ZERO, Duration.ofSeconds(1)).start();
    server.stop();
  }

  @Test
  void aHealthOnlyPort_answersHealthInPlaintext_andNothingElse_andTurnsNotServingWhenTheServerStops() throws Exception {
    CountDownLatch draining = new CountDownLatch(1);
    CountDownLatch drained = new CountDownLatch(1);
    GrpcServer server = new GrpcServer(InProcessServerBuilder.forName("health-port"),
        List.of(new AdminServiceGrpc.AdminServiceImplBase() {}), List.of(), Duration.ofSeconds(30), Duration.ofSeconds(1),
        drain -> {
          draining.countDown();
          drained.await();
        }).serveHealthOn(new InetSocketAddress("127.0.0.1", 0)).start();
    int port = server.healthPort();
    ManagedChannel channel = Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create())
        .build();
    try {
      HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
      assertThat(health.withDeadlineAfter(Patience.STEP_SECONDS, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance()).getStatus())
          .isEqualTo(ServingStatus.SERVING);
      assertThat(health.withDeadlineAfter(Patience.STEP_SECONDS, TimeUnit.SECONDS).check(HealthCheckRequest.newBuilder()
          .setService(AdminServiceGrpc.SERVICE_NAME).build()).getStatus()).isEqualTo(ServingStatus.SERVING);
      assertThat(Status.fromThrowable(catchThrowable(() -> AdminServiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(Patience.STEP_SECONDS, TimeUnit.SECONDS).listHotKeys(ListHotKeysRequest.getDefaultInstance()))).getCode())
          .as("the services themselves are not on the health port").isEqualTo(Status.Code.UNIMPLEMENTED);

      Thread stopping = new Thread(server::stop);
      stopping.start();
      assertThat(draining.await(Patience.STEP_SECONDS, TimeUnit.SECONDS)).isTrue();
      assertThat(health.withDeadlineAfter(Patience.STEP_SECONDS, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance()).getStatus())
          .as("while it drains").isEqualTo(ServingStatus.NOT_SERVING);
      drained.countDown();
      stopping.join(Patience.STEP.toMillis());
      assertThat(stopping.isAlive()).isFalse();
      ManagedChannel after = Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create())
          .build();
      try {
        assertThat(Status.fromThrowable(catchThrowable(() -> HealthGrpc.newBlockingStub(after)
            .withDeadlineAfter(Patience.STEP_SECONDS, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance()))).getCode())
            .as("the port is closed once the server has stopped").isEqualTo(Status.Code.UNAVAILABLE);
      } finally {
        after.shutdownNow();
      }
    } finally {
      channel.shutdownNow();
    }
  }
}
