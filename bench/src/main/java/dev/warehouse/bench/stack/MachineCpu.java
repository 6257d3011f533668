package dev.warehouse.bench.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * How busy the whole machine's CPUs were between two readings of {@code /proc/stat}: every process,
 * the kernel's network work included, not only the processes the benchmark started.
 */
public final class MachineCpu {

  private final long[] ticks;

  private MachineCpu(long[] ticks) {
    this.ticks = ticks;
  }

  public static MachineCpu read() {
    try {
      return parse(Files.readAllLines(Path.of("/proc/stat")).get(0));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The aggregate {@code cpu} line: user nice system idle iowait irq softirq steal (then guest time, already in user). */
  static MachineCpu parse(String cpuLine) {
    String[] fields = cpuLine.trim().split("\\s+");
    if (!fields[0].equals("cpu") || fields.length < 9) {
      throw new IllegalArgumentException("not the aggregate cpu line of /proc/stat: " + cpuLine);
    }
    return new MachineCpu(Arrays.stream(fields, 1, 9).mapToLong(Long::parseLong).toArray());
  }

  /** Waits, at most {@code limit}, until the machine is under {@code share} busy over a second; returns the last share. */
  public static double awaitQuiet(double share, java.time.Duration limit) throws InterruptedException {
    long giveUp = System.nanoTime() + limit.toNanos();
    double busy;
    do {
      MachineCpu before = read();
      Thread.sleep(1000);
      busy = read().busySince(before);
    } while (busy > share && System.nanoTime() < giveUp);
    return busy;
  }

  /** The share of CPU time, 0 to 1, that was not idle (nor waiting for I/O) since {@code earlier}. */
  public double busySince(MachineCpu earlier) {
    long total = 0;
    for (int i = 0; i < ticks.length; i++) {
      total += ticks[i] - earlier.ticks[i];
    }
    long idle = (ticks[3] - earlier.ticks[3]) + (ticks[4] - earlier.ticks[4]);
    return total == 0 ? 0 : (total - idle) / (double) total;
  }
}
