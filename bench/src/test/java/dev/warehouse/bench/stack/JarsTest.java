package dev.warehouse.bench.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JarsTest {

  @TempDir
  Path dir;

  @Test
  void aBuiltCheckout_givesItsModulesTargetJars() throws IOException {
    for (String module : Jars.MODULES) {
      touch(dir.resolve(module).resolve("target").resolve(module + ".jar"));
    }

    Jars jars = Jars.baseline(dir);

    assertThat(jars.jar("order-service")).isEqualTo(dir.resolve("order-service/target/order-service.jar"));
    assertThat(jars.name("order-service")).isEqualTo("baseline-order-service");
  }

  @Test
  void aFlatFolder_givesItsJars() throws IOException {
    for (String module : Jars.MODULES) {
      touch(dir.resolve(module + ".jar"));
    }

    assertThat(Jars.baseline(dir).jar("gateway")).isEqualTo(dir.resolve("gateway.jar"));
  }

  @Test
  void aFolderWithoutEveryJar_isRefusedNamingWhatIsMissing() throws IOException {
    touch(dir.resolve("inventory-service.jar"));
    touch(dir.resolve("gateway.jar"));

    assertThatThrownBy(() -> Jars.baseline(dir)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("order-service.jar").hasMessageNotContaining("gateway.jar,");
  }

  @Test
  void thisBuild_keepsTheProjectLayoutAndItsOwnNames() {
    Jars jars = Jars.of(dir);

    assertThat(jars.jar("gateway")).isEqualTo(dir.resolve("gateway/target/gateway.jar"));
    assertThat(jars.name("gateway")).isEqualTo("gateway");
  }

  private static void touch(Path file) throws IOException {
    Files.createDirectories(file.getParent());
    Files.createFile(file);
  }
}
