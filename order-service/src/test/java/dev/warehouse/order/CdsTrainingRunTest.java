package dev.warehouse.order;

import dev.warehouse.runtime.testing.CdsTrainingRuns;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar order-service.jar train-cds}, the run an image's build makes its class-data-sharing archive
 * from: with nothing around it (no DynamoDB, no inventory, no certificates), it starts the service as
 * {@code main} does, passes the container's probe, and its calls get past mutual TLS, authorization and
 * validation to the store, which is not there.
 */
@Tag("integration")
class CdsTrainingRunTest {

  @Test
  void trainingRun_servesItsProbeAndCalls_thenCleansUp() throws Exception {
    CdsTrainingRuns.servesItsProbeAndCalls_thenCleansUp(OrderMain::train);
  }
}
