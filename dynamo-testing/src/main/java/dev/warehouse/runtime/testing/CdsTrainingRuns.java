package dev.warehouse.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.process.CdsTraining;
import dev.warehouse.testing.LogRecords;
import java.nio.file.Path;
import java.util.Map;

/** What every jar's {@code train-cds} run must do, checked the same way for each (its tests pass their run). */
public final class CdsTrainingRuns {

  private CdsTrainingRuns() {}

  /**
   * Runs {@code run} as {@code train-cds} does, in a fresh workspace: it must pass its probe (the run throws
   * otherwise), make two calls that fail UNAVAILABLE at the missing store or backends, and leave no
   * workspace (the throwaway identity) behind.
   */
  public static void servesItsProbeAndCalls_thenCleansUp(CdsTraining.Run run) throws Exception {
    Path dir;
    try (LogRecords log = new LogRecords(CdsTraining.class); CdsTraining training = CdsTraining.prepare()) {
      dir = training.dir();
      run.run(training);
      assertThat(log.events()).extracting(LogRecords.Logged::fields).containsExactly(
          Map.of("event", "cds_training_call", "status", "UNAVAILABLE"),
          Map.of("event", "cds_training_call", "status", "UNAVAILABLE"));
    }
    assertThat(dir).as("the throwaway identity is gone").doesNotExist();
  }
}
