package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.routing.v1.Consistency;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.routing.v1.SortKeyCondition;
import dev.warehouse.runtime.routing.KeyTemplate;
import dev.warehouse.runtime.routing.Route;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A declared key is picked by the fields it needs and rendered from values given in the caller's order. */
class DeclaredKeyTest {

  private static Route.ItemKey item(String pk, String sk) {
    return new Route.ItemKey(KeyTemplate.parse(pk), KeyTemplate.parse(sk), List.of(Operation.OPERATION_PUT_ITEM));
  }

  /** A place-order-like route: the customer's copy, with the direct copy and a request record beside it. */
  private static final Route ROUTE = new Route("test.v1.Svc/Place", "W9", "place", List.of(Operation.OPERATION_TRANSACT_WRITE_ITEMS),
      Optional.empty(), KeyTemplate.parse("CUSTOMER#{customer_id}"), KeyTemplate.parse("ORDER#{order_date}#{order_id}"),
      List.of(SortKeyCondition.SORT_KEY_CONDITION_EQUALS), Consistency.CONSISTENCY_WRITE, "low",
      List.of(item("ORDER#{order_id}", "METADATA"), item("CUSTOMER#{customer_id}", "REQUEST#{request_id}")),
      List.of(Operation.OPERATION_PUT_ITEM), Optional.empty());

  @Test
  void render_fillsTheMainKeysTemplates_withValuesInTheOrderTheFieldsWereNamed() {
    assertThat(DeclaredKey.of(ROUTE, "customer_id", "order_date", "order_id").render("C-1", "2026-07-26", "O-1"))
        .isEqualTo(new TableKey("CUSTOMER#C-1", "ORDER#2026-07-26#O-1"));
    assertThat(DeclaredKey.of(ROUTE, "order_id", "customer_id", "order_date").render("O-1", "C-1", "2026-07-26"))
        .isEqualTo(new TableKey("CUSTOMER#C-1", "ORDER#2026-07-26#O-1"));
  }

  @Test
  void of_picksTheItemAlsoWritten_whoseTemplatesNeedExactlyTheFields() {
    assertThat(DeclaredKey.of(ROUTE, "order_id").render("O-1")).isEqualTo(new TableKey("ORDER#O-1", "METADATA"));
    assertThat(DeclaredKey.of(ROUTE, "request_id", "customer_id").render("r-1", "C-1"))
        .isEqualTo(new TableKey("CUSTOMER#C-1", "REQUEST#r-1"));
  }

  @Test
  void of_refusesFieldsNoDeclaredKeyNeedsExactly() {
    assertThatThrownBy(() -> DeclaredKey.of(ROUTE, "customer_id")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("W9 Place declares 0 keys of the fields [customer_id]");
    assertThatThrownBy(() -> DeclaredKey.of(ROUTE, "order_id", "serial_number")).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void render_refusesAnotherNumberOfValues() {
    DeclaredKey direct = DeclaredKey.of(ROUTE, "order_id");
    assertThatThrownBy(() -> direct.render("O-1", "extra")).isInstanceOf(IllegalArgumentException.class);
  }
}
