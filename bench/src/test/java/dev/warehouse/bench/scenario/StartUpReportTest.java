package dev.warehouse.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.scenario.StartUpJvms.Jvm;
import dev.warehouse.bench.scenario.StartUpJvms.Trained;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Scenario 5's section: the targets judged on the AOT cache, and without a JDK 25 a column that says so. */
class StartUpReportTest {

  private static final String JDK17 = "openjdk version \"17.0.15\"\nOpenJDK 64-Bit Server VM (build 17.0.15+6)";
  private static final String JDK25 = "openjdk version \"25.0.3\"\nOpenJDK 64-Bit Server VM Temurin-25.0.3+9 (build 25.0.3+9-LTS)";

  @Test
  void withAJdk25_everyJvmHasItsColumn_andTheTargetsAreJudgedOnTheAotCache() {
    List<Jvm> jvms = List.of(jvm("plain", "JDK 17", JDK17, false), jvm("cds", "JDK 17 + CDS archive", JDK17, true),
        jvm("plain_25", "JDK 25", JDK25, false), jvm("aot", "JDK 25 + AOT cache", JDK25, true));
    // The archive misses the target, the cache meets it: "Met" follows the cache.
    String section = section(jvms, Map.of("plain", 1900L, "cds", 1100L, "plain_25", 1600L, "aot", 700L), true);

    assertThat(section).contains("| Process | JDK 17: median [runs] | JDK 17 + CDS archive: median [runs] | "
        + "JDK 25: median [runs] | JDK 25 + AOT cache: median [runs] | Target (ms) | Met (JDK 25 + AOT cache) |");
    assertThat(section).contains("| gateway alone | 1900 [1900, 1900, 1900] | 1100 [1100, 1100, 1100] | "
        + "1600 [1600, 1600, 1600] | 700 [700, 700, 700] | < 1000 | yes |");
    assertThat(section).contains("JDK 17 is OpenJDK 64-Bit Server VM (build 17.0.15+6); JDK 25 is OpenJDK 64-Bit "
        + "Server VM Temurin-25.0.3+9 (build 25.0.3+9-LTS).").doesNotContain("not measured");
  }

  @Test
  void withoutAJdk25_itsColumnSaysNotMeasured_andTheTargetsAreJudgedOnTheArchive() {
    List<Jvm> jvms = List.of(jvm("plain", "JDK 17", JDK17, false), jvm("cds", "JDK 17 + CDS archive", JDK17, true));
    String section = section(jvms, Map.of("plain", 1900L, "cds", 900L), false);

    assertThat(section).contains("| Process | JDK 17: median [runs] | JDK 17 + CDS archive: median [runs] | "
        + "JDK 25 + AOT cache | Target (ms) | Met (JDK 17 + CDS archive) |");
    assertThat(section).contains("| inventory-service alone | 1900 [1900, 1900, 1900] | 900 [900, 900, 900] | "
        + "not measured | < 1000 | yes |");
    assertThat(section).contains("no JDK 25 was given (`--java25 PATH` or `JAVA25_HOME`");
  }

  private static Jvm jvm(String key, String label, String version, boolean trained) {
    Map<String, Trained> caches = new LinkedHashMap<>();
    if (trained) {
      StartUp.PROCESSES.forEach(m -> caches.put(m, new Trained(List.of("-XX:Flag=" + m), 5_000, 40L << 20)));
    }
    return new Jvm(key, label, Path.of("/jdk/bin/java"), version, caches);
  }

  /** The section with every start of a JVM taking {@code ms} (the stack three times that), three runs each. */
  private static String section(List<Jvm> jvms, Map<String, Long> ms, boolean aotMeasured) {
    Map<String, Map<String, List<Long>>> runs = new LinkedHashMap<>();
    Map<String, Map<String, List<Long>>> rss = new LinkedHashMap<>();
    for (Jvm jvm : jvms) {
      long each = ms.get(jvm.key());
      for (String process : StartUp.PROCESSES) {
        runs.computeIfAbsent(jvm.key(), k -> new LinkedHashMap<>()).put(process, new ArrayList<>(List.of(each, each, each)));
        rss.computeIfAbsent(jvm.key(), k -> new LinkedHashMap<>()).put(process, List.of(140L, 141L, 139L));
      }
      runs.get(jvm.key()).put(StartUp.STACK, List.of(3 * each, 3 * each, 3 * each));
    }
    Report report = new Report();
    StartUp.write(report, jvms, runs, rss, 3, aotMeasured);
    return report.markdown();
  }
}
