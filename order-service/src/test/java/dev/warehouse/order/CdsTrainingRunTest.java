package dev.warehouse.order;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.server.CdsTraining;
import dev.warehouse.runtime.testing.LogRecords;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar order-service.jar train-cds}, the run an image's build makes its class-data-sharing archive
 * from: with nothing around it (no DynamoDB, no inventory, no certificates), it starts the service as
 * {@code main} does, passes the container's probe, and its calls get past mutual TLS, authorization and
 * validation to the store, which is not there.
 */
class CdsTrainingRunTest {

  @Test
  void trainingRun_servesItsProbeAndCalls_thenCleansUp() throws Exception {
    Path dir;
    try (LogRecords log = new LogRecords(CdsTraining.class); CdsTraining training = CdsTraining.prepare()) {
      dir = training.dir();
      OrderMain.train(training); // throws unless the probe answered SERVING
      assertThat(log.lines()).containsExactly("event=cds_training_call status=UNAVAILABLE",
          "event=cds_training_call status=UNAVAILABLE");
    }
    assertThat(dir).as("the throwaway identity is gone").doesNotExist();
  }
}
