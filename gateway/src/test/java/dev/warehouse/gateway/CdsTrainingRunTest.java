package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.server.CdsTraining;
import dev.warehouse.runtime.testing.LogRecords;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar gateway.jar train-cds}, the run an image's build makes its class-data-sharing archive from:
 * with nothing around it (no backends, no certificates, no keys), it starts the gateway as {@code main} does,
 * passes the container's probe, and its calls are authenticated, authorized and forwarded to backends that
 * are not there.
 */
class CdsTrainingRunTest {

  @Test
  void trainingRun_servesItsProbeAndForwardsItsCalls_thenCleansUp() throws Exception {
    Path dir;
    try (LogRecords log = new LogRecords(CdsTraining.class); CdsTraining training = CdsTraining.prepare()) {
      dir = training.dir();
      GatewayMain.train(training); // throws unless the probe answered SERVING
      assertThat(log.lines()).containsExactly("event=cds_training_call status=UNAVAILABLE",
          "event=cds_training_call status=UNAVAILABLE");
    }
    assertThat(dir).as("the throwaway identity is gone").doesNotExist();
  }
}
