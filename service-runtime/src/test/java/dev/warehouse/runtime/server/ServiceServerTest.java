package dev.warehouse.runtime.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessServerBuilder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ServiceServerTest {

  @Test
  void refusesToStart_whenAServiceHasAnRpcWithoutRoute() {
    assertThatThrownBy(() -> new ServiceServer(InProcessServerBuilder.forName("no-routes"),
            List.of(new HealthGrpc.HealthImplBase() {}), List.of(), Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("every RPC must declare its route");
  }

  @Test
  void servesTheAdminService_whoseRpcsReadNoTable_withoutRoutes() throws Exception {
    assertThat(ServiceServer.ROUTE_EXEMPT).containsExactly(AdminServiceGrpc.SERVICE_NAME);
    ServiceServer server = new ServiceServer(InProcessServerBuilder.forName("admin-only"),
        List.of(new AdminServiceGrpc.AdminServiceImplBase() {}), List.of(), Duration.ZERO, Duration.ofSeconds(1)).start();
    server.stop();
  }
}
