package dev.warehouse.gateway;

import dev.warehouse.runtime.testing.CdsTrainingRuns;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar gateway.jar train-cds}, the run an image's build makes its class-data-sharing archive from:
 * with nothing around it (no backends, no certificates, no keys), it starts the gateway as {@code main} does,
 * passes the container's probe, and its calls are authenticated, authorized and forwarded to backends that
 * are not there.
 */
@Tag("integration")
class CdsTrainingRunTest {

  @Test
  void trainingRun_servesItsProbeAndForwardsItsCalls_thenCleansUp() throws Exception {
    CdsTrainingRuns.servesItsProbeAndCalls_thenCleansUp(GatewayMain::train);
  }
}
