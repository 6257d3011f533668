package dev.warehouse.bench.scenario;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JVMs scenario 5 starts the jars on, side by side: the benchmark's own java (JDK 17 here) without and with
 * each jar's class-data-sharing archive, and a JDK 25 or later without and with each jar's AOT cache, the two
 * ways {@code run.sh} and the image start them. Each archive and cache is trained here by the JVM that uses it,
 * with the jar's {@code train-cds} run.
 */
final class StartUpJvms {

  /** The first JDK whose {@code -XX:AOTCacheOutput} makes an AOT cache in one run (JEP 514). */
  static final int AOT_SINCE = 25;
  private static final Pattern VERSION = Pattern.compile("version \"(?:1\\.)?(\\d+)");

  /**
   * One column of the scenario: a java, what it is ({@code java -version}'s last line), and per jar the flags
   * that start it from its archive or cache, with how that was made; none for a cold start.
   */
  record Jvm(String key, String label, Path java, String version, Map<String, Trained> trained) {

    List<String> flags(String module) {
      Trained t = trained.get(module);
      return t == null ? List.of() : t.flags();
    }
  }

  /** A jar's archive or cache as trained here: the flags that use it, how long its training run took, its size. */
  record Trained(List<String> flags, long trainingMs, long bytes) {}

  private StartUpJvms() {}

  /**
   * The JDK 25 to measure, from {@code --java25 PATH} or else {@code JAVA25_HOME}: a JDK's directory or its java.
   * Refused, before anything runs, when it is not a java of JDK 25 or later; empty when neither names one.
   */
  static Optional<Path> java25(Optional<String> option, Optional<String> home) throws IOException, InterruptedException {
    Optional<String> given = option.or(() -> home.filter(h -> !h.isBlank()));
    if (given.isEmpty()) {
      return Optional.empty();
    }
    Path path = Path.of(given.get());
    Path java = Files.isDirectory(path) ? path.resolve("bin").resolve("java") : path;
    if (!Files.isExecutable(java)) {
      throw new IllegalArgumentException("--java25/JAVA25_HOME: " + java + " is not a java executable");
    }
    int feature = feature(version(java));
    if (feature < AOT_SINCE) {
      throw new IllegalArgumentException("--java25/JAVA25_HOME: " + java + " is JDK " + feature
          + "; the AOT cache's training run needs JDK " + AOT_SINCE + " or later");
    }
    return Optional.of(java);
  }

  /** The feature release in {@code java -version}'s output ({@code 17} for "17.0.15", {@code 8} for "1.8.0"), or -1. */
  static int feature(String versionOutput) {
    Matcher m = VERSION.matcher(versionOutput);
    return m.find() ? Integer.parseInt(m.group(1)) : -1;
  }

  /** What {@code java -version} says, all of it. */
  static String version(Path java) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(java.toString(), "-version").redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(1, TimeUnit.MINUTES)) {
      process.destroyForcibly();
    }
    return out.strip();
  }

  /** The last line of {@code java -version}: the VM and its build, for the report. */
  static String vm(String versionOutput) {
    List<String> lines = versionOutput.lines().toList();
    return lines.isEmpty() ? "?" : lines.get(lines.size() - 1).strip();
  }

  /** {@code list} turned left by {@code round}: over rounds, each item takes every place in turn. */
  static <T> List<T> rotated(List<T> list, int round) {
    List<T> out = new ArrayList<>(list.size());
    for (int i = 0; i < list.size(); i++) {
      out.add(list.get((i + round) % list.size()));
    }
    return out;
  }

  /** Trains {@code jar}'s class-data-sharing archive with {@code java}, as run.sh does on JDK 17. */
  static Trained archive(Path java, Path jar, Path work, String module) throws IOException, InterruptedException {
    Path file = work.resolve(module + ".jsa");
    long ms = train(List.of(java.toString(), "-XX:ArchiveClassesAtExit=" + file), jar, file, work, module + "-train-cds");
    // -Xshare:auto would start without an archive it cannot use and measure nothing: make sure it maps.
    check(List.of(java.toString(), "-XX:SharedArchiveFile=" + file, "-Xshare:on", "-cp", jar.toString(), "-version"),
        file, jar);
    return new Trained(List.of("-XX:SharedArchiveFile=" + file, "-Xshare:auto"), ms, Files.size(file));
  }

  /** Trains {@code jar}'s AOT cache with {@code java} (JDK 25 or later), as run.sh and the image do. */
  static Trained aotCache(Path java, Path jar, Path work, String module) throws IOException, InterruptedException {
    Path file = work.resolve(module + ".aot");
    long ms = train(List.of(java.toString(), "-XX:AOTCacheOutput=" + file), jar, file, work, module + "-train-aot");
    // The same for the cache: -XX:AOTMode=on refuses to start without it.
    check(List.of(java.toString(), "-XX:AOTCache=" + file, "-XX:AOTMode=on", "-cp", jar.toString(), "-version"),
        file, jar);
    return new Trained(List.of("-XX:AOTCache=" + file), ms, Files.size(file));
  }

  private static long train(List<String> jvm, Path jar, Path file, Path work, String name)
      throws IOException, InterruptedException {
    Files.createDirectories(work);
    Files.deleteIfExists(file);
    List<String> command = new ArrayList<>(jvm);
    command.addAll(List.of("-jar", jar.toString(), "train-cds"));
    Path log = work.resolve(name + ".log");
    long started = System.nanoTime();
    Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(5, TimeUnit.MINUTES) || process.exitValue() != 0 || !Files.exists(file)) {
      process.destroyForcibly();
      throw new IllegalStateException(jar.getFileName() + " train-cds made no " + file.getFileName() + "; see " + log);
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
  }

  private static void check(List<String> command, Path file, Path jar) throws IOException, InterruptedException {
    Process check = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!check.waitFor(1, TimeUnit.MINUTES) || check.exitValue() != 0) {
      check.destroyForcibly();
      throw new IllegalStateException("the JVM does not use " + file + " with " + jar);
    }
  }
}
