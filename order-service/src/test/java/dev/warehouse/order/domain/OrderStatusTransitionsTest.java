package dev.warehouse.order.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OrderStatusTransitionsTest {

  @Test
  void allowsExactlyTheLifeCycle() {
    Set<String> allowed = Set.of("PLACED>PAID", "PAID>SHIPPED", "SHIPPED>DELIVERED", "PLACED>CANCELLED", "PAID>CANCELLED");
    for (OrderStatus from : OrderStatus.values()) {
      for (OrderStatus to : OrderStatus.values()) {
        assertThat(from.canMoveTo(to)).as(from + " -> " + to).isEqualTo(allowed.contains(from + ">" + to));
      }
    }
    assertThat(OrderStatus.DELIVERED.next()).isEqualTo(EnumSet.noneOf(OrderStatus.class));
  }
}
