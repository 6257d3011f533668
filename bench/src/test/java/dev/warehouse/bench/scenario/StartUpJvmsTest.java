package dev.warehouse.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StartUpJvmsTest {

  @TempDir
  Path dir;

  @Test
  void feature_readsTheReleaseOfEveryVersionScheme() {
    assertThat(StartUpJvms.feature("openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment")).isEqualTo(17);
    assertThat(StartUpJvms.feature("openjdk version \"25.0.3\" 2026-04-21 LTS")).isEqualTo(25);
    assertThat(StartUpJvms.feature("openjdk version \"26-ea\" 2026-03-17")).isEqualTo(26);
    assertThat(StartUpJvms.feature("java version \"1.8.0_402\"")).isEqualTo(8);
    assertThat(StartUpJvms.feature("bash: java: command not found")).isEqualTo(-1);
  }

  @Test
  void rotated_putsEveryJvmInEveryPlace_overAsManyRounds() {
    List<String> jvms = List.of("plain", "cds", "plain_25", "aot");
    List<List<String>> rounds = new ArrayList<>();
    for (int round = 0; round < jvms.size(); round++) {
      rounds.add(StartUpJvms.rotated(jvms, round));
    }

    assertThat(rounds.get(0)).isEqualTo(jvms);
    assertThat(rounds.get(1)).containsExactly("cds", "plain_25", "aot", "plain");
    for (int place = 0; place < jvms.size(); place++) {
      int p = place;
      assertThat(rounds.stream().map(r -> r.get(p))).as("place " + place).containsExactlyInAnyOrderElementsOf(jvms);
    }
  }

  @Test
  void java25_takesTheOptionBeforeTheVariable_aJdksDirectoryOrItsJava() throws Exception {
    Path jdk25 = fakeJdk("jdk-25", "25.0.3");
    Path jdk26 = fakeJdk("jdk-26", "26");

    assertThat(StartUpJvms.java25(Optional.empty(), Optional.of(jdk25.toString())))
        .contains(jdk25.resolve("bin/java"));
    assertThat(StartUpJvms.java25(Optional.of(jdk26.resolve("bin/java").toString()), Optional.of(jdk25.toString())))
        .contains(jdk26.resolve("bin/java"));
  }

  @Test
  void java25_isEmptyWhenNoneIsGiven_andRefusesAnOlderJdkOrNoJava() throws Exception {
    assertThat(StartUpJvms.java25(Optional.empty(), Optional.empty())).isEmpty();
    assertThat(StartUpJvms.java25(Optional.empty(), Optional.of(""))).isEmpty();

    Path jdk17 = fakeJdk("jdk-17", "17.0.15");
    assertThatThrownBy(() -> StartUpJvms.java25(Optional.of(jdk17.toString()), Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is JDK 17");
    assertThatThrownBy(() -> StartUpJvms.java25(Optional.of(dir.resolve("nowhere").toString()), Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a java executable");
  }

  @Test
  void vm_isTheLastLineOfJavaVersion() {
    assertThat(StartUpJvms.vm("openjdk version \"25.0.3\" 2026-04-21 LTS\nOpenJDK Runtime Environment Temurin-25.0.3+9\n"
        + "OpenJDK 64-Bit Server VM Temurin-25.0.3+9 (build 25.0.3+9-LTS, mixed mode, sharing)"))
        .isEqualTo("OpenJDK 64-Bit Server VM Temurin-25.0.3+9 (build 25.0.3+9-LTS, mixed mode, sharing)");
  }

  /** A JDK directory whose bin/java only says its version, as {@code java -version} does (on standard error). */
  private Path fakeJdk(String name, String version) throws IOException {
    Path java = Files.createDirectories(dir.resolve(name).resolve("bin")).resolve("java");
    Files.writeString(java, "#!/bin/sh\necho 'openjdk version \"" + version + "\" 2026-01-01' >&2\n");
    assertThat(java.toFile().setExecutable(true)).isTrue();
    return dir.resolve(name);
  }
}
