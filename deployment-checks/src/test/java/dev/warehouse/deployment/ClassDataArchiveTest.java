package dev.warehouse.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.process.CdsTraining;
import dev.warehouse.testing.Commands;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * Every JVM that runs a jar of the system starts from that jar's AOT cache (JDK 25's successor of the
 * class-data-sharing archive; docs/operations/deploy.md#class-data-sharing), or on JDK 17 from its archive: the image
 * runs JDK 25, trains the cache with the JVM that runs it and its ENTRYPOINT maps it, compose's health checks map
 * it too, and run.sh makes one per jar with a JDK 25 when it finds one (an archive with the java on PATH when
 * not) and starts every JVM with it. A flag dropped anywhere fails here: nothing else would notice, since the
 * JVM starts without a cache as well, only slower. {@code KubernetesManifestsTest} holds the manifests to the
 * same flags.
 */
@Tag("integration")
@Tag("deployment")
class ClassDataArchiveTest {

  static final Path ROOT = Repo.ROOT;
  /** The first JDK whose {@code -XX:AOTCacheOutput} makes a cache in one run (JEP 514). */
  private static final int AOT_CACHE_OUTPUT_SINCE = 25;
  private static final Pattern TRAINING = Pattern.compile(
      "(?m)^RUN java -XX:AOTCacheOutput=(\\S+) -jar (\\S+) " + CdsTraining.COMMAND + "$");
  private static final Pattern ENTRYPOINT = Pattern.compile("(?m)^ENTRYPOINT \\[(.*)]$");
  private static final Pattern JRE = Pattern.compile("(?m)^FROM eclipse-temurin:(\\d+)-jre-(\\S+)");
  /** The JVM options every process starts with (run.sh, the image, the benchmark's stacks), and the image's copy. */
  static final String JVM_OPTIONS = "deploy/jvm.options";
  static final String IMAGE_JVM_OPTIONS = "/app/jvm.options";
  /** JDK 25's switch for Netty's sun.misc.Unsafe allocations, without a warning on stderr; JDK 17 refuses it. */
  static final String UNSAFE_ALLOWED = "--sun-misc-unsafe-memory-access=allow";
  /** Every JVM option that names a cache or archive, or turns sharing off. */
  static final String[] CACHE_OPTIONS = {"-Xshare", "SharedArchiveFile", "AOTCache", "AOTMode"};

  /** The cache the image's training run writes. */
  static String imageCache() throws IOException {
    Matcher training = TRAINING.matcher(Files.readString(ROOT.resolve("Dockerfile")));
    assertThat(training.find()).as("the Dockerfile trains the cache: RUN java -XX:AOTCacheOutput=… -jar … "
        + CdsTraining.COMMAND).isTrue();
    return training.group(1);
  }

  /** The flags that start a JVM of the image from its cache, as its ENTRYPOINT has them. */
  static List<String> imageFlags() throws IOException {
    return List.of("-XX:AOTCache=" + imageCache());
  }

  @Test
  void dockerfile_trainsTheCacheInTheStageThatRunsIt_onJdk25_andItsEntrypointMapsIt() throws IOException {
    String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
    Matcher training = TRAINING.matcher(dockerfile);
    assertThat(training.find()).isTrue();
    assertThat(training.group(2)).as("it trains the jar the image runs").isEqualTo("/app/app.jar");
    // The JVM maps a cache only with the JVM that wrote it: the training runs in the runtime stage (the JRE
    // image), after the jar is copied in, not in the build stage's JDK.
    int runtimeStage = dockerfile.lastIndexOf("\nFROM ");
    Matcher jre = JRE.matcher(dockerfile);
    assertThat(jre.find(runtimeStage)).as("the runtime stage runs a JRE").isTrue();
    assertThat(Integer.parseInt(jre.group(1))).as("the runtime stage's JDK")
        .isGreaterThanOrEqualTo(AOT_CACHE_OUTPUT_SINCE);
    assertThat(training.start()).as("the training runs in the runtime stage")
        .isGreaterThan(dockerfile.indexOf("COPY --from=build", runtimeStage));
    assertThat(dockerfile).as("the dev kit's image on the same JRE: one base layer for every image")
        .contains(jre.group() + " AS dev-kit\n");

    Matcher entrypoint = ENTRYPOINT.matcher(dockerfile);
    assertThat(entrypoint.find(runtimeStage)).as("the runtime stage's ENTRYPOINT").isTrue();
    List<String> command = new ArrayList<>();
    for (String part : entrypoint.group(1).split(",")) {
      command.add(part.strip().replaceAll("^\"|\"$", ""));
    }
    List<String> expected = new ArrayList<>(List.of("java", "@" + IMAGE_JVM_OPTIONS, UNSAFE_ALLOWED));
    expected.addAll(imageFlags());
    expected.addAll(List.of("-jar", "/app/app.jar"));
    assertThat(command).as("the ENTRYPOINT starts with the project's JVM options and maps the cache").isEqualTo(expected);
    assertThat(dockerfile).as("the image carries the project's JVM options")
        .contains("\nCOPY " + JVM_OPTIONS + " " + IMAGE_JVM_OPTIONS + "\n");
    // Nothing in the image's JVM options turns sharing off or names another cache.
    assertThat(dockerfile.lines().filter(line -> line.startsWith("ENV JAVA_TOOL_OPTIONS")))
        .allSatisfy(line -> assertThat(line).doesNotContain(CACHE_OPTIONS));
  }

  @Test
  @SuppressWarnings("unchecked")
  void compose_keepsTheEntrypoint_andItsHealthChecksMapTheCache() throws IOException {
    Map<String, Object> compose = new Yaml().load(Files.readString(ROOT.resolve("docker-compose.yml")));
    Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) compose.get("services");
    int ours = 0;
    for (var service : services.entrySet()) {
      if (!service.getValue().get("image").toString().startsWith("warehouse/")) {
        continue; // moto, Prometheus, Grafana, the Pushgateway: not our jars
      }
      ours++;
      assertThat(service.getValue()).as(service.getKey() + ": the image's entrypoint, which maps the cache")
          .doesNotContainKey("entrypoint");
      Map<String, Object> healthcheck = (Map<String, Object>) service.getValue().get("healthcheck");
      if (healthcheck != null) {
        List<String> test = (List<String>) healthcheck.get("test");
        assertThat(test).as(service.getKey() + " health check").containsSequence("CMD", "java");
        assertThat(test).as(service.getKey() + " health check's JVM").containsAll(imageFlags());
      }
    }
    assertThat(ours).isEqualTo(6);
  }

  @Test
  void runSh_trainsACacheOrAnArchivePerJar_andStartsEveryJvmOfAJarWithIt() throws IOException {
    String run = Files.readString(ROOT.resolve("run.sh"));
    assertThat(run).contains("source tools/java-env.sh", "JAVA=\"${JAVA_AOT:-java}\"")
        // With a JDK 25: its AOT cache, made again when the jar or the JVM is another.
        .contains("\"$JAVA\" -XX:AOTCacheOutput=\"$cache\" -jar \"$jar\" " + CdsTraining.COMMAND)
        .contains("cache=\"$module/target/$module.aot\"", "cksum <\"$jar\"", "$JAVA_AOT_VERSION")
        .contains("echo \"-XX:AOTCache=$1/target/$1.aot\"", "echo \"" + UNSAFE_ALLOWED + "\"")
        // Without: JDK 17's class-data-sharing archive, as before.
        .contains("java -XX:ArchiveClassesAtExit=\"$archive\" -jar \"$jar\" " + CdsTraining.COMMAND)
        .contains("archive=\"$module/target/$module.jsa\"")
        .contains("echo \"-XX:SharedArchiveFile=$1/target/$1.jsa -Xshare:auto\"");
    // Every JVM of one of the services' jars runs on the chosen java with its flags (the dev kit's one-shot
    // commands have no cache).
    Matcher launch = Pattern.compile(
        "(?m)^\\s*((?i)\\S*java\\S*) (.*?)-jar (inventory-service|order-service|gateway)/target/(\\S+)\\.jar").matcher(run);
    int launches = 0;
    while (launch.find()) {
      launches++;
      assertThat(launch.group(1)).as("run.sh: " + launch.group()).isEqualTo("\"$JAVA\"");
      assertThat(launch.group(3)).isEqualTo(launch.group(4));
      assertThat(launch.group(2)).as("run.sh: " + launch.group())
          .contains("@" + JVM_OPTIONS, "$(startup_flags " + launch.group(3) + ")");
    }
    assertThat(launches).as("the three services").isGreaterThanOrEqualTo(3);
  }

  /** run.sh's choice of JVM, on a machine of fake JDKs: a JDK 25 or later wherever it is looked for, else none. */
  @Test
  void javaEnv_findsAJdk25_besideThePathsJava_orInJavaHome_andNothingOlder(@TempDir Path jvms) throws Exception {
    Path jdk17 = fakeJdk(jvms, "jdk-17", "17.0.15");
    Path jdk21 = fakeJdk(jvms, "jdk-21", "21.0.4");
    assertThat(javaAot(jdk17, Map.of())).as("only 17 and 21 installed").isEmpty();
    assertThat(javaAot(jdk17, Map.of("JAVA_HOME", jdk21.toString()))).isEmpty();

    Path jdk25 = fakeJdk(jvms, "jdk-25", "25.0.3");
    assertThat(javaAot(jdk17, Map.of())).as("beside the java on PATH")
        .isEqualTo(jdk25.resolve("bin/java").toString());
    Path elsewhere = fakeJdk(Files.createDirectory(jvms.resolve("elsewhere")), "jdk-26", "26");
    assertThat(javaAot(jdk17, Map.of("JAVA_HOME", elsewhere.toString())))
        .as("JAVA_HOME first").isEqualTo(elsewhere.resolve("bin/java").toString());
    assertThat(javaAot(jdk17, Map.of("JAVA_HOME", elsewhere.toString(), "JAVA25_HOME", jdk25.toString())))
        .as("JAVA25_HOME before it").isEqualTo(jdk25.resolve("bin/java").toString());
  }

  /** A JDK directory whose bin/java only says its version, as {@code java -version} does. */
  private static Path fakeJdk(Path parent, String name, String version) throws IOException {
    Path java = Files.createDirectories(parent.resolve(name).resolve("bin")).resolve("java");
    Files.writeString(java, "#!/bin/sh\necho 'openjdk version \"" + version + "\" 2026-01-01' >&2\n");
    assertThat(java.toFile().setExecutable(true)).isTrue();
    return parent.resolve(name).toRealPath();
  }

  /** JAVA_AOT as tools/java-env.sh sets it, with {@code jdk}'s java first on PATH and {@code env} besides. */
  private static String javaAot(Path jdk, Map<String, String> env) throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder("bash", "-c",
        "set -euo pipefail; source tools/java-env.sh; echo \"$JAVA_AOT\"")
        .directory(ROOT.toFile());
    builder.environment().keySet().removeAll(List.of("JAVA_HOME", "JAVA25_HOME"));
    builder.environment().put("PATH", jdk.resolve("bin") + ":/usr/bin:/bin");
    builder.environment().putAll(env);
    Commands.Run run = Commands.run(builder, Duration.ofMinutes(1));
    assertThat(run.exitValue()).as("sourcing tools/java-env.sh: %s", run.errors()).isZero();
    return run.output().strip();
  }
}
