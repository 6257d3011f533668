package dev.warehouse.bench.stack;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The JVMs a scenario starts ({@link Stack#java}), logging under {@code target/bench-logs}; closed last first. */
public final class Processes implements AutoCloseable {

  private final Path root;
  private final Path logs;
  private final List<Proc> started = new ArrayList<>();

  public Processes(Path root) {
    this.root = root;
    this.logs = root.resolve("target/bench-logs");
  }

  /** Starts {@code module}'s jar as {@code name} (its log file's name) with {@code env}; does not wait for it. */
  public Proc start(String module, String name, Map<String, String> env) throws IOException {
    Proc proc = Stack.java(root, logs, module, name, env);
    started.add(proc);
    return proc;
  }

  @Override
  public void close() throws InterruptedException {
    for (int i = started.size() - 1; i >= 0; i--) {
      started.get(i).close();
    }
  }
}
