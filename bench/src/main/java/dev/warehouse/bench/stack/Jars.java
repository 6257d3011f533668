package dev.warehouse.bench.stack;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a stack's runnable jars are: this build's ({@code MODULE/target/MODULE.jar} under the project), or
 * a baseline's folder, laid out the same way (an older checkout, built) or flat ({@code MODULE.jar}).
 * A baseline's processes log under names of their own, so that its logs do not overwrite this build's.
 */
public final class Jars {

  /** The modules a stack runs. */
  public static final List<String> MODULES = List.of("inventory-service", "order-service", "gateway");

  private final Path dir;
  private final boolean flat;
  private final String logPrefix;

  private Jars(Path dir, boolean flat, String logPrefix) {
    this.dir = dir;
    this.flat = flat;
    this.logPrefix = logPrefix;
  }

  /** This build's jars, under the project at {@code root}. */
  public static Jars of(Path root) {
    return new Jars(root, false, "");
  }

  /**
   * A baseline build's jars in {@code dir}: the project's layout when its inventory-service jar is there,
   * flat otherwise. Checked now, so that a wrong folder fails before any scenario has run.
   *
   * @throws IllegalArgumentException naming every jar that is missing
   */
  public static Jars baseline(Path dir) {
    boolean flat = !Files.isRegularFile(new Jars(dir, false, "").jar(MODULES.get(0)));
    Jars jars = new Jars(dir, flat, "baseline-");
    List<String> missing = new ArrayList<>();
    for (String module : MODULES) {
      if (!Files.isRegularFile(jars.jar(module))) {
        missing.add(jars.jar(module).toString());
      }
    }
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException("--baseline " + dir + ": no " + String.join(", ", missing)
          + " (the folder holds MODULE/target/MODULE.jar or MODULE.jar for " + String.join(", ", MODULES) + ")");
    }
    return jars;
  }

  /** The runnable jar of {@code module}. */
  public Path jar(String module) {
    return flat ? dir.resolve(module + ".jar") : dir.resolve(module).resolve("target").resolve(module + ".jar");
  }

  /** The name of {@code module}'s process and log. */
  public String name(String module) {
    return logPrefix + module;
  }

  @Override
  public String toString() {
    return dir.toString();
  }
}
