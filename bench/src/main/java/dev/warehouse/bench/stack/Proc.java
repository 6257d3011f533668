package dev.warehouse.bench.stack;

import dev.warehouse.runtime.process.HealthProbe;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import java.io.IOException;
import java.io.PrintStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A process the benchmark starts and watches: its start-up time, resident memory and CPU time. */
public final class Proc implements AutoCloseable {

  /** Clock ticks per second of /proc/PID/stat times (USER_HZ: 100 on Linux). */
  private static final double TICKS_PER_SECOND = 100.0;

  public final String name;
  public final int grpcPort;
  public final int metricsPort;
  private final Process process;
  private final long launchedNanos;
  private final Path log;

  private Proc(String name, Process process, int grpcPort, int metricsPort, long launchedNanos, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.grpcPort = grpcPort;
    this.metricsPort = metricsPort;
    this.launchedNanos = launchedNanos;
  }

  /** Starts {@code command} with {@code env} added, logging to {@code logs/NAME.log}. */
  public static Proc start(String name, List<String> command, Map<String, String> env, Path logs, int grpcPort,
      int metricsPort) throws IOException {
    Files.createDirectories(logs);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(logs.resolve(name + ".log").toFile());
    builder.environment().putAll(env);
    long launched = System.nanoTime();
    return new Proc(name, builder.start(), grpcPort, metricsPort, launched, logs.resolve(name + ".log"));
  }

  /** Whether the process ended because one of its ports was taken when it bound it. */
  public boolean lostItsPort() throws IOException {
    return !process.isAlive() && Files.readString(log).contains("java.net.BindException");
  }

  /** Waits until the process's gRPC health says SERVING; returns milliseconds since launch. */
  public long awaitServing(long timeoutMs) throws InterruptedException {
    return awaitServing(timeoutMs, InsecureChannelCredentials.create());
  }

  /** The same, asking over a channel with {@code credentials}: a port that serves TLS. */
  public long awaitServing(long timeoutMs, ChannelCredentials credentials) throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    PrintStream quiet = System.out;
    while (System.nanoTime() < giveUp) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with " + process.exitValue());
      }
      // Until the port is open, a bare connect: a health check's channel costs this JVM far more CPU, which
      // the starting one, on the same cores, would lose, and it could only be refused.
      if (!listening()) {
        Thread.sleep(5);
        continue;
      }
      System.setOut(new PrintStream(OutputStream.nullOutputStream()));
      int status;
      try {
        status = HealthProbe.check(grpcPort, "", credentials);
      } finally {
        System.setOut(quiet);
      }
      if (status == 0) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - launchedNanos);
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException(name + " was not SERVING within " + timeoutMs + " ms");
  }

  private boolean listening() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", grpcPort), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Whether the process's log (its standard output and error) has a line containing {@code text}. */
  public boolean logged(String text) {
    try (var lines = Files.lines(log)) {
      return lines.anyMatch(line -> line.contains(text));
    } catch (IOException | java.io.UncheckedIOException e) {
      return false;
    }
  }

  /** Resident set size in bytes (VmRSS), or -1 when unknown. */
  public long rssBytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }

  /** CPU seconds (user + system) the process has used so far, or -1 when unknown. */
  public double cpuSeconds() {
    return cpuSeconds(pid());
  }

  public static double cpuSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / TICKS_PER_SECOND;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }
}
