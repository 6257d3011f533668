package dev.warehouse.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code LOW_STOCK_SHARDS}: the route's count unless set, 1 to 100, refused at start when malformed. */
class LowStockShardsSettingTest {

  @Test
  void unset_isTheRoutesDeclaredCount_andASetCountIsUsed() {
    assertThat(InventoryMain.lowStockShards(Map.of()).count()).isEqualTo(16);
    assertThat(InventoryMain.lowStockShards(Map.of("LOW_STOCK_SHARDS", "64")).count()).isEqualTo(64);
    assertThat(InventoryMain.lowStockShards(Map.of("LOW_STOCK_SHARDS", "1")).count()).isEqualTo(1);
    assertThat(InventoryMain.variables()).contains("LOW_STOCK_SHARDS", "TABLE_NAME");
  }

  @Test
  void outOfRangeOrMalformed_isRefused_namingTheVariable() {
    for (String bad : new String[] {"0", "101", "-4", "many"}) {
      assertThatThrownBy(() -> InventoryMain.lowStockShards(Map.of("LOW_STOCK_SHARDS", bad)))
          .as(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LOW_STOCK_SHARDS");
    }
  }
}
