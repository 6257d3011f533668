package dev.warehouse.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code LOW_STOCK_SHARDS}: the route's count unless set, 1 to 100, refused at start when malformed. */
class LowStockShardsSettingTest {

  @Test
  void unset_isTheRoutesDeclaredCount_andASetCountIsUsed() {
    assertThat(InventorySettings.fromEnvironment(Map.of()).shards().count()).isEqualTo(16);
    assertThat(InventorySettings.fromEnvironment(Map.of("LOW_STOCK_SHARDS", "64")).shards().count()).isEqualTo(64);
    assertThat(InventorySettings.fromEnvironment(Map.of("LOW_STOCK_SHARDS", "1")).shards().count()).isEqualTo(1);
    assertThat(InventoryMain.variables()).contains("LOW_STOCK_SHARDS", "TABLE_NAME");
  }

  @Test
  void outOfRangeOrMalformed_isRefused_namingTheVariable() {
    for (String bad : new String[] {"0", "101", "-4", "many"}) {
      assertThatThrownBy(() -> InventorySettings.fromEnvironment(Map.of("LOW_STOCK_SHARDS", bad)).shards())
          .as(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LOW_STOCK_SHARDS");
    }
  }
}
