package dev.warehouse.bench.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class MachineCpuTest {

  @Test
  void busyIsEverythingButIdleAndIoWait_overTheInterval() {
    MachineCpu before = MachineCpu.parse("cpu  100 0 50 800 10 0 5 0 0 0");
    // 200 ticks later: user +60, system +20, softirq +10, idle +100, iowait +10.
    MachineCpu after = MachineCpu.parse("cpu  160 0 70 900 20 0 15 0 0 0");

    assertThat(after.busySince(before)).isCloseTo(90 / 200.0, within(1e-9));
  }

  @Test
  void refusesALineThatIsNotTheAggregate() {
    assertThatThrownBy(() -> MachineCpu.parse("cpu0 1 2 3 4 5 6 7 8"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void readsThisMachine() {
    MachineCpu first = MachineCpu.read();
    assertThat(MachineCpu.read().busySince(first)).isBetween(0.0, 1.0);
  }
}
