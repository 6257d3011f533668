package dev.warehouse.simulation;

import org.junit.jupiter.api.Tag;

/**
 * The reservations' contract with every product's stock split over 4 buckets: 10 units are 3, 3, 2 and 2,
 * so most holds of the contract span buckets or find their first one short, and every promise (all or
 * nothing, OUT_OF_STOCK only when the sum is short, a lost race's answer) still holds.
 */
@Tag("integration")
class SplitStockReservationsContractTest extends DynamoReservationsContractTest {

  @Override
  int buckets() {
    return 4;
  }
}
