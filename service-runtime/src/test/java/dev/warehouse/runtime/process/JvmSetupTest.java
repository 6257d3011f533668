package dev.warehouse.runtime.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Netty's settings every process starts with: JFR events off and sun.misc.Unsafe used, unless the command line says. */
class JvmSetupTest {

  private final Map<String, String> saved = new HashMap<>();

  @BeforeEach
  void save() {
    for (String key : keys()) {
      saved.put(key, System.getProperty(key));
      System.clearProperty(key);
    }
  }

  @AfterEach
  void restore() {
    saved.forEach((key, value) -> {
      if (value == null) {
        System.clearProperty(key);
      } else {
        System.setProperty(key, value);
      }
    });
  }

  @Test
  void bothNettys_useUnsafe_andGrpcsRecordsNoJfrEvents_byDefault() {
    JvmSetup.configureNetty();

    assertThat(System.getProperty("io.grpc.netty.shaded.io.netty.noUnsafe")).isEqualTo("false");
    assertThat(System.getProperty("io.netty.noUnsafe")).isEqualTo("false");
    assertThat(System.getProperty(JvmSetup.NETTY_JFR)).isEqualTo("false");
  }

  @Test
  void whatTheCommandLineSays_stays() {
    System.setProperty("io.netty.noUnsafe", "true");
    System.setProperty(JvmSetup.NETTY_JFR, "true");

    JvmSetup.configureNetty();

    assertThat(System.getProperty("io.netty.noUnsafe")).isEqualTo("true");
    assertThat(System.getProperty("io.grpc.netty.shaded.io.netty.noUnsafe")).isEqualTo("false");
    assertThat(System.getProperty(JvmSetup.NETTY_JFR)).isEqualTo("true");
  }

  private static List<String> keys() {
    List<String> keys = new java.util.ArrayList<>(JvmSetup.NETTY_NO_UNSAFE);
    keys.add(JvmSetup.NETTY_JFR);
    return keys;
  }
}
