package dev.warehouse.bench.stack;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * The machine's cores split between the system under test and what stands outside it (the load generator,
 * the store), with {@code taskset}: on a machine shared with its own load generator, an open loop offered
 * past capacity takes the cores from the processes it measures, so what it reports is the generator's CPU,
 * not their overload behaviour. Closing gives every process all cores again.
 */
public final class Cores implements AutoCloseable {

  private final List<Long> pinned;
  private final String all;
  private final String description;

  private Cores(List<Long> pinned, String all, String description) {
    this.pinned = pinned;
    this.all = all;
    this.description = description;
  }

  /**
   * The stack's own processes on core 0; this JVM (the generator, and the stand-in store when it runs here)
   * and moto on the others. On one core, nothing is split.
   */
  public static Cores split(Stack stack) throws IOException, InterruptedException {
    int cores = Runtime.getRuntime().availableProcessors();
    if (cores < 2) {
      return new Cores(List.of(), "0", "one core, shared by everything");
    }
    String all = "0-" + (cores - 1);
    String outside = cores == 2 ? "1" : "1-" + (cores - 1);
    List<Long> pinned = new ArrayList<>();
    for (Proc process : stack.processes()) {
      pin(process.pid(), "0");
      pinned.add(process.pid());
    }
    long self = ProcessHandle.current().pid();
    pin(self, outside);
    pinned.add(self);
    OptionalLong moto = stack.motoPid();
    if (moto.isPresent()) {
      pin(moto.getAsLong(), outside);
      pinned.add(moto.getAsLong());
    }
    return new Cores(pinned, all, "the gateway and the services on core 0; the load generator, the polite caller and "
        + "the store (moto, or the stand-in in the generator's JVM) on core" + (cores == 2 ? " 1" : "s " + outside));
  }

  /** What ran where, for the report. */
  public String description() {
    return description;
  }

  /** Pins every thread of {@code pid} to {@code cpus}; threads they start later inherit it. */
  static void pin(long pid, String cpus) throws IOException, InterruptedException {
    Process taskset = new ProcessBuilder("taskset", "-a", "-cp", cpus, Long.toString(pid)).redirectErrorStream(true).start();
    String output = new String(taskset.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (taskset.waitFor() != 0) {
      throw new IOException("taskset -a -cp " + cpus + " " + pid + " failed: " + output.strip());
    }
  }

  @Override
  public void close() throws IOException, InterruptedException {
    for (long pid : pinned) {
      if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
        pin(pid, all);
      }
    }
  }
}
