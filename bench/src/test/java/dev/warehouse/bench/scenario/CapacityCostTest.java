package dev.warehouse.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class CapacityCostTest {

  @Test
  void monthlyCost_isUnitsPerCall_timesCallsInThirtyDays_atThePricePerMillion() {
    var read = new CapacityCost.PerCall("A1", "GetSerialItem", 10, 0, "GetItem 1", 0, 0.5, 0);
    var write = new CapacityCost.PerCall("W4", "PlaceOrder", 10, 0, "TransactWriteItems 1", 0, 0, 6);

    // 2,592,000 calls a month at 1 call/s.
    assertThat(read.monthlyUsd(1)).isCloseTo(2_592_000 * 0.5 * 0.125 / 1e6, within(1e-9));
    assertThat(write.monthlyUsd(1_000)).isCloseTo(2_592_000_000.0 * 6 * 0.625 / 1e6, within(1e-6));
  }

  @Test
  void table_hasARowPerRpc_andACostColumnPerRate() {
    String table = CapacityCost.table(List.of(new CapacityCost.PerCall("A7", "ListLowStock", 5, 0, "Query 16", 3, 8, 0)));

    assertThat(table.lines().toList()).hasSize(3);
    assertThat(table).contains("USD a month at 10 calls/s", "USD a month at 100 calls/s", "USD a month at 1,000 calls/s")
        .contains("| A7 | `ListLowStock` | Query 16 | 3.00 | 8.00 | 0.00 | 25.92 | 259 | 2,592 |");
  }
}
