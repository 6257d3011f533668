package dev.warehouse.deployment;

import dev.warehouse.contracttools.RetrievalMapDoc;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.runtime.routing.RouteTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The README's retrieval map is the one declared on the RPCs. When a route changes, this test fails
 * and prints the table to paste between the markers.
 */
@Tag("deployment")
class ReadmeRetrievalMapTest {

  private static final String BEGIN = "<!-- retrieval-map:begin (generated from the route options; see ReadmeRetrievalMapTest) -->\n";
  private static final String END = "<!-- retrieval-map:end -->";

  @Test
  void readmeTable_matchesTheDeclaredRoutes() throws Exception {
    String expected = RetrievalMapDoc.markdown(List.of(
        RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")),
        RouteTable.of(dev.warehouse.inventory.v1.ReservationServiceProto.getDescriptor().findServiceByName("ReservationService")),
        RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService"))));
    String readme = Files.readString(Path.of(System.getProperty("project.root", "..")).resolve("README.md"));
    int begin = readme.indexOf(BEGIN);
    int end = readme.indexOf(END);
    assertThat(begin).as("README.md lacks the line: " + BEGIN).isNotNegative();
    assertThat(end).as("README.md lacks the line: " + END).isGreaterThan(begin);
    assertThat(readme.substring(begin + BEGIN.length(), end))
        .as("README retrieval map is out of date; replace it with:%n%s", expected)
        .isEqualTo(expected);
  }
}
