package dev.warehouse.inventory.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The stock's rules, without a table: what AdjustStock and PutProductInventory may leave on hand. */
class StockRulesTest {

  private static final Instant T = Instant.parse("2026-12-04T05:00:00Z");
  /** 10 on hand, 4 of them reserved for orders. */
  private static final ProductInventory STOCK = new ProductInventory("P-1", "W-1", 10, 2, T, 4);

  private static StockAdjustment adjust(long delta) {
    return new StockAdjustment("P-1", "W-1", delta, "r-1");
  }

  private static String reason(Throwable e) {
    return ((dev.warehouse.runtime.error.ClientFacingException) e).reason();
  }

  @Test
  void quantityAfter_addsTheDelta_downToTheReservedUnits() {
    assertThat(adjust(5).quantityAfter(STOCK)).isEqualTo(15);
    assertThat(adjust(-6).quantityAfter(STOCK)).isEqualTo(4);
  }

  @Test
  void quantityAfter_refusesBelowNone_belowTheReserved_andAboveTheMost() {
    assertThatThrownBy(() -> adjust(-11).quantityAfter(STOCK)).isInstanceOf(FailedPreconditionException.class)
        .satisfies(e -> assertThat(reason(e)).isEqualTo("INSUFFICIENT_STOCK"));
    assertThatThrownBy(() -> adjust(-7).quantityAfter(STOCK)).isInstanceOf(FailedPreconditionException.class)
        .satisfies(e -> assertThat(reason(e)).isEqualTo("STOCK_RESERVED"));
    assertThatThrownBy(() -> adjust(ProductInventory.MAX_QUANTITY - 9).quantityAfter(STOCK))
        .isInstanceOf(FailedPreconditionException.class)
        .satisfies(e -> assertThat(reason(e)).isEqualTo("STOCK_LIMIT_EXCEEDED"));
    assertThat(adjust(ProductInventory.MAX_QUANTITY - 10).quantityAfter(STOCK)).isEqualTo(ProductInventory.MAX_QUANTITY);
  }

  @Test
  void replacing_keepsTheReservedUnits_andRefusesAQuantityBelowThem() {
    ProductInventory asked = new ProductInventory("P-1", "W-1", 7, 3, T);
    assertThat(asked.replacing(Optional.of(STOCK)).reserved()).isEqualTo(4);
    assertThat(asked.replacing(Optional.empty()).reserved()).isZero();
    assertThatThrownBy(() -> new ProductInventory("P-1", "W-1", 3, 3, T).replacing(Optional.of(STOCK)))
        .isInstanceOf(FailedPreconditionException.class)
        .satisfies(e -> assertThat(reason(e)).isEqualTo("STOCK_RESERVED"));
  }

  @Test
  void requestIdReused_namesTheRequestAndTheProduct() {
    assertThat(adjust(1).requestIdReused()).isInstanceOf(AlreadyExistsException.class)
        .satisfies(e -> assertThat(e.reason()).isEqualTo("REQUEST_ID_REUSED"))
        .hasMessageContaining("r-1").hasMessageContaining("P-1");
  }
}
