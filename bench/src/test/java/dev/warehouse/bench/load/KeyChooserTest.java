package dev.warehouse.bench.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class KeyChooserTest {

  private static final int DRAWS = 200_000;

  @Test
  void zipf_makesTheFirstKeysHot_inTheTheoreticalProportion() {
    int n = 1000;
    int[] counts = new int[n];
    KeyChooser zipf = KeyChooser.zipf(n, 1.0, 42);
    for (int i = 0; i < DRAWS; i++) {
      counts[zipf.next()]++;
    }
    double harmonic = 0;
    for (int k = 1; k <= n; k++) {
      harmonic += 1.0 / k;
    }
    assertThat(counts[0] / (double) DRAWS).isCloseTo(1 / harmonic, within(0.01));
    assertThat(counts[1] / (double) DRAWS).isCloseTo(0.5 / harmonic, within(0.01));
    assertThat(counts[0]).isGreaterThan(50 * counts[n - 1] + 1);
  }

  @Test
  void uniform_spreadsEvenly() {
    int n = 10;
    int[] counts = new int[n];
    KeyChooser uniform = KeyChooser.uniform(n, 7);
    for (int i = 0; i < DRAWS; i++) {
      counts[uniform.next()]++;
    }
    for (int c : counts) {
      assertThat(c / (double) DRAWS).isCloseTo(0.1, within(0.01));
    }
  }
}
