package dev.warehouse.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The order saga's deterministic simulation ({@link SagaWorld}), over many seeds. A failure names its
 * seed, which replays it exactly: {@code ./mvnw -pl simulation test -Dsim.seed=N}. More seeds:
 * {@code -Dsim.seeds=100000} (and {@code -Dsim.from=N} to start elsewhere).
 */
class SagaSimulationTest {

  /** Seeds ./test.sh runs. */
  static final int DEFAULT_SEEDS = 2_000;

  private static ScheduledExecutorService idle;
  private static Level logLevel;

  @BeforeAll
  static void quiet() {
    // The code under test logs every deferred step and failed call: thousands a run, and nothing to read here.
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    logLevel = root.getLevel();
    root.setLevel(Level.OFF);
    idle = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "simulation-idle");
      t.setDaemon(true);
      return t;
    });
  }

  @AfterAll
  static void restore() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(logLevel);
    idle.shutdownNow();
  }

  @Test
  void everySeed_keepsTheInvariants_andEndsEveryOrder() {
    String one = System.getProperty("sim.seed");
    if (one != null && !one.isBlank()) {
      new SagaWorld(Long.parseLong(one.trim()), idle).run();
      return;
    }
    long from = Long.getLong("sim.from", 1);
    long seeds = Long.getLong("sim.seeds", DEFAULT_SEEDS);
    Map<String, Long> explored = new TreeMap<>();
    for (long seed = from; seed < from + seeds; seed++) {
      SagaWorld world = new SagaWorld(seed, idle);
      world.run();
      world.counts().forEach((event, n) -> explored.merge(event, n, Long::sum));
    }
    System.out.println("simulation: " + seeds + " seeds from " + from + " explored " + explored);
    // Green only means something if the races and faults happened: each of these, somewhere in the seeds.
    assertThat(explored).containsKeys("crash", "freeze", "db conflict", "db answer lost", "inventory request lost",
        "inventory answer lost", "order ended PLACED", "order ended REJECTED", "order ended CANCELLED",
        "order ended DELIVERED", "buyer told PLACED", "buyer told REFUSED",
        // a rejecting path's fence that found the order placed by another path, and so placed it too
        "ReleaseReservation RESERVATION_CONFIRMED",
        // a confirm that found the hold released (expired, or fenced by the recovery)
        "ConfirmReservation RESERVATION_RELEASED");
  }
}
