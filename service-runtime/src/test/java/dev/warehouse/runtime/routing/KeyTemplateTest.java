package dev.warehouse.runtime.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class KeyTemplateTest {

  @Test
  void rendersLiteralsAndVariablesInOrder() {
    KeyTemplate t = KeyTemplate.parse("ORDER#{order_date}#{order_id}");
    assertThat(t.variables()).containsExactly("order_date", "order_id");
    assertThat(t.prefix()).isEqualTo("ORDER#");
    assertThat(t.render("2026-07-26", "O900")).isEqualTo("ORDER#2026-07-26#O900");
    assertThat(t.render(Map.of("order_id", "O900", "order_date", "2026-07-26"))).isEqualTo("ORDER#2026-07-26#O900");
  }

  @Test
  void constantTemplate_rendersItself() {
    KeyTemplate t = KeyTemplate.parse("METADATA");
    assertThat(t.variables()).isEmpty();
    assertThat(t.render()).isEqualTo("METADATA");
  }

  @Test
  void refusesMalformedTemplatesAndMissingValues() {
    assertThatThrownBy(() -> KeyTemplate.parse("PRODUCT#{product_id")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KeyTemplate.parse("PRODUCT#{Product}")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KeyTemplate.parse("SERIAL#{serial_number}").render()).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KeyTemplate.parse("SERIAL#{serial_number}").render(Map.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
