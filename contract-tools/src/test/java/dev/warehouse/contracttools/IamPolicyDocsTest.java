package dev.warehouse.contracttools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.routing.KeyTemplate;
import dev.warehouse.runtime.routing.RouteTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The IAM policy documents checked in under {@code deploy/aws/iam/} are the ones the routes (and the
 * audits' operations) generate. When a route changes, this test fails and says how to regenerate them;
 * run with {@code -Diam.regenerate=true}, it writes them.
 */
class IamPolicyDocsTest {

  static final String REGENERATE = "./mvnw -B -o -q -pl contract-tools -am test -Dtest=IamPolicyDocsTest "
      + "-Dsurefire.failIfNoSpecifiedTests=false -Diam.regenerate=true";

  /** The documents the declarations generate, by file name; the services' own tests evaluate requests against them. */
  static SortedMap<String, String> generated() {
    return IamPolicy.documents(Map.of(
            "inventory-service", RouteTable.combined("inventory-service",
                RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")),
                RouteTable.of(dev.warehouse.inventory.v1.ReservationServiceProto.getDescriptor()
                    .findServiceByName("ReservationService"))),
            "order-service", RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService"))),
        PacedScan.OPERATIONS);
  }

  @Test
  void checkedInDocuments_matchTheDeclaredRoutes() throws Exception {
    Path dir = Path.of(System.getProperty("project.root", "..")).resolve("deploy/aws/iam");
    SortedMap<String, String> expected = generated();
    if (Boolean.getBoolean("iam.regenerate")) {
      Files.createDirectories(dir);
      for (Map.Entry<String, String> document : expected.entrySet()) {
        Files.writeString(dir.resolve(document.getKey()), document.getValue());
      }
    }
    for (Map.Entry<String, String> document : expected.entrySet()) {
      Path file = dir.resolve(document.getKey());
      assertThat(file).as("deploy/aws/iam/%s is missing; regenerate with:%n%s", document.getKey(), REGENERATE).exists();
      assertThat(Files.readString(file))
          .as("deploy/aws/iam/%s is out of date with the routes; regenerate with:%n%s", document.getKey(), REGENERATE)
          .isEqualTo(document.getValue());
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(f -> f.getFileName().toString()).toList())
          .as("deploy/aws/iam holds only generated documents; delete the others")
          .containsExactlyInAnyOrderElementsOf(expected.keySet());
    }
  }

  @Test
  void leadingKeyPatterns_turnEachVariableIntoAWildcard_andRefuseWildcardsInLiteralText() {
    assertThat(IamPolicy.leadingKey(KeyTemplate.parse("PRODUCT#{product_id}"))).isEqualTo("PRODUCT#*");
    assertThat(IamPolicy.leadingKey(KeyTemplate.parse("LOW_STOCK#{shard}"))).isEqualTo("LOW_STOCK#*");
    assertThat(IamPolicy.leadingKey(KeyTemplate.parse("ORDER#{order_date}#{order_id}"))).isEqualTo("ORDER#*#*");
    assertThat(IamPolicy.leadingKey(KeyTemplate.parse("METADATA"))).isEqualTo("METADATA");
    assertThatThrownBy(() -> IamPolicy.leadingKey(KeyTemplate.parse("ALL*{id}")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wildcard");
  }

  @Test
  void theAuditsDocument_isReadOnly() {
    assertThat(IamPolicy.forTableReader(List.of("Scan", "GetItem")))
        .contains("dynamodb:Scan", "dynamodb:GetItem").doesNotContain("Condition");
    assertThatThrownBy(() -> IamPolicy.forTableReader(List.of("Scan", "PutItem")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PutItem");
  }
}
