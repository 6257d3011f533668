package dev.warehouse.runtime.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class HealthProbeTest {

  @Test
  void passesWhileServing_failsOnceStoppedOrUnknown() throws Exception {
    ServiceServer server = new ServiceServer(NettyServerBuilder.forPort(0), List.of(), List.of(), Duration.ZERO,
        Duration.ofSeconds(1)).start();
    int port = server.port();
    assertThat(HealthProbe.check(port, "")).isZero();
    assertThat(HealthProbe.check(port, "no.such.Service")).isEqualTo(1);
    server.stop();
    assertThat(HealthProbe.check(port, "")).isEqualTo(1);
  }
}
