package dev.warehouse.testing;

import java.time.Duration;

/**
 * How long a test waits for a step that should happen at once (a call on loopback, a latch, a server's stop):
 * an upper bound, never a timing claim. Generous because test JVMs run two per core beside builds and other
 * jobs, where connecting alone has taken six seconds; a passing test never waits it out, so it costs nothing.
 * Timing belongs to the benchmark.
 */
public final class Patience {

  public static final Duration STEP = Duration.ofSeconds(30);
  public static final long STEP_SECONDS = STEP.toSeconds();

  private Patience() {}
}
