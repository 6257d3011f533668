package dev.warehouse.runtime.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("integration")
class HealthProbeTest {

  @Test
  void passesWhileServing_failsOnceStoppedOrUnknown() throws Exception {
    GrpcServer server = new GrpcServer(NettyServerBuilder.forPort(0), List.of(), List.of(), Duration.ZERO,
        Duration.ofSeconds(1)).start();
    int port = server.port();
    // The probe gives a call 2 s, as a kubelet's probe timeout would; this JVM's first gRPC call also loads
    // the channel's classes, which on a loaded test machine can take longer. So the first may be retried.
    Awaitility.await("the probe passes against a serving server").atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50)).until(() -> HealthProbe.check(port, ""), status -> status == 0);
    assertThat(HealthProbe.check(port, "")).isZero();
    assertThat(HealthProbe.check(port, "no.such.Service")).isEqualTo(1);
    server.stop();
    assertThat(HealthProbe.check(port, "")).isEqualTo(1);
  }
}
