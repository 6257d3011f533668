package dev.warehouse.order.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.routing.Route;
import dev.warehouse.runtime.testing.RouteConformance;
import java.time.LocalDate;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each named key function builds exactly the key its routes declare in the contract (rendered by field name). */
class OrderKeysTest {

  private static final LocalDate DATE = LocalDate.parse("2026-07-26");
  private static final Map<String, String> FIELDS = Map.of(
      "customer_id", "C-1", "order_id", "O-1", "order_date", DATE.toString(), "request_id", "r-1");

  private static TableKey declared(Route route) {
    return RouteConformance.declaredKey(route, FIELDS);
  }

  private static TableKey declared(Route.ItemKey key) {
    return RouteConformance.declaredKey(key, FIELDS);
  }

  @Test
  void corridor_isW4sMainKey_andTheCopyW5AlsoWrites() {
    assertThat(OrderKeys.corridor("C-1", DATE, "O-1"))
        .isEqualTo(declared(OrderKeys.PLACE_ORDER))
        .isEqualTo(declared(OrderKeys.UPDATE_STATUS.alsoWrites().get(0)));
  }

  @Test
  void direct_isA6sAndW5sKey_andTheCopyW4AlsoWrites() {
    assertThat(OrderKeys.direct("O-1"))
        .isEqualTo(declared(OrderKeys.ORDER_BY_ID))
        .isEqualTo(declared(OrderKeys.UPDATE_STATUS));
    assertThat(OrderKeys.PLACE_ORDER.alsoWrites()).extracting(OrderKeysTest::declared)
        .containsExactly(OrderKeys.direct("O-1"), OrderKeys.orderRequest("C-1", "r-1"));
  }

  @Test
  void corridorQueries_readA5sPartitionFromItsPrefix() {
    assertThat(OrderKeys.customerPk("C-1")).isEqualTo(OrderKeys.ORDERS_OF_CUSTOMER.partitionKey().render(FIELDS));
    assertThat(OrderKeys.corridorPrefix("")).isEqualTo(OrderKeys.ORDERS_OF_CUSTOMER.sortKey().render(FIELDS));
    assertThat(OrderKeys.corridor("C-1", DATE, "O-1").sk())
        .startsWith(OrderKeys.corridorPrefix("2026-07"))
        .isBetween(OrderKeys.corridorFrom(DATE), OrderKeys.corridorUntil(DATE))
        .isLessThan(OrderKeys.corridorEnd());
  }
}
