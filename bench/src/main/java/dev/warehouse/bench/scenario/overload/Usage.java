package dev.warehouse.bench.scenario.overload;

import dev.warehouse.bench.stack.MachineCpu;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Stack;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.DoubleSupplier;

/**
 * CPU of each process of the stack and of the benchmark itself, how busy the machine was, and how much of
 * that was neither the benchmark nor what it started (other work on a shared machine), over a stretch.
 */
final class Usage {
  private static final int CORES = Runtime.getRuntime().availableProcessors();
  private final Map<String, DoubleSupplier> cpu = new LinkedHashMap<>();
  private final Map<String, Double> before = new LinkedHashMap<>();
  private final double oursBefore;
  private final MachineCpu machine;
  private final long started;

  private Usage(Stack stack) {
    stack.processes().forEach(p -> cpu.put(p.name, p::cpuSeconds));
    stack.motoPid().ifPresent(pid -> cpu.put("moto", () -> Proc.cpuSeconds(pid)));
    long self = ProcessHandle.current().pid();
    cpu.put("bench", () -> Proc.cpuSeconds(self));
    cpu.forEach((name, seconds) -> before.put(name, seconds.getAsDouble()));
    this.oursBefore = ours();
    this.machine = MachineCpu.read();
    this.started = System.nanoTime();
  }

  static Usage start(Stack stack) {
    return new Usage(stack);
  }

  /** CPU seconds of this process and every process it started (the stack's JVMs, moto). */
  private static double ours() {
    return Proc.cpuSeconds(ProcessHandle.current().pid())
        + ProcessHandle.current().descendants().mapToDouble(p -> Math.max(0, Proc.cpuSeconds(p.pid()))).sum();
  }

  /**
   * @param coresByProcess CPU seconds per second of the stretch, by process (1.0 is a whole core)
   * @param machineBusy    the share of the machine's CPU time that was busy, every process counted
   * @param othersCores    cores busy with work the benchmark did not start (others' tests, builds)
   */
  public record Measured(double seconds, Map<String, Double> coresByProcess, double machineBusy, double othersCores) {}

  Measured stop() {
    double seconds = (System.nanoTime() - started) / 1e9;
    Map<String, Double> cores = new LinkedHashMap<>();
    cpu.forEach((name, now) -> cores.put(name, (now.getAsDouble() - before.get(name)) / seconds));
    double busy = MachineCpu.read().busySince(machine);
    double others = Math.max(0, busy * CORES - (ours() - oursBefore) / seconds);
    return new Measured(seconds, cores, busy, others);
  }
}
