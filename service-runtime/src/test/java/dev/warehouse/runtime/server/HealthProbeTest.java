package dev.warehouse.runtime.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.List;
import org.junit.jupiter.api.Test;

class HealthProbeTest {

  @Test
  void passesWhileServing_failsOnceStoppedOrUnknown() throws Exception {
    ServiceServer server = new ServiceServer(NettyServerBuilder.forPort(0), List.of(), List.of(), Duration.ZERO,
        Duration.ofSeconds(1)).start();
    int port = server.port();
    // The probe gives a call 2 s, as a kubelet's probe timeout would; this JVM's first gRPC call also loads
    // the channel's classes, which on a loaded test machine can take longer. So the first may be retried.
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (HealthProbe.check(port, "") != 0) {
      assertThat(System.nanoTime()).as("the probe never passed against a serving server").isLessThan(giveUp);
    }
    assertThat(HealthProbe.check(port, "")).isZero();
    assertThat(HealthProbe.check(port, "no.such.Service")).isEqualTo(1);
    server.stop();
    assertThat(HealthProbe.check(port, "")).isEqualTo(1);
  }
}
