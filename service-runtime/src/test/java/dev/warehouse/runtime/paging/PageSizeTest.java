package dev.warehouse.runtime.paging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.error.Violations;
import org.junit.jupiter.api.Test;

class PageSizeTest {

  @Test
  void zeroIsTheDefault_largeIsClamped_negativeIsAViolation() {
    Violations ok = new Violations();
    assertThat(PageSize.resolve(0, ok)).isEqualTo(25);
    assertThat(PageSize.resolve(7, ok)).isEqualTo(7);
    assertThat(PageSize.resolve(100, ok)).isEqualTo(100);
    assertThat(PageSize.resolve(5000, ok)).isEqualTo(100);
    assertThat(ok.isEmpty()).isTrue();

    Violations bad = new Violations();
    PageSize.resolve(-1, bad);
    assertThat(bad.isEmpty()).isFalse();
  }
}
