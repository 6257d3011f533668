package dev.warehouse.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.store.DynamoInventoryRepository;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What the contract's comments promise about idempotency and limits is what the code implements. */
class ContractPromisesTest {

  private static String contract() throws Exception {
    return Files.readString(Path.of(System.getProperty("project.root", ".."))
        .resolve("proto/src/main/proto/warehouse/inventory/v1/inventory_service.proto"))
        .replaceAll("\\s*//\\s*", " ");
  }

  @Test
  void adjustStock_promisesTheRequestRecordsLifetime_andItsScope() throws Exception {
    assertThat(contract())
        .contains("request ids are scoped to the product, and a request_id repeated for the same product within "
            + DynamoInventoryRepository.REQUEST_RECORD_TTL.toDays() + " days")
        .contains("Scoped to the product; remembered for " + DynamoInventoryRepository.REQUEST_RECORD_TTL.toDays() + " days.");
  }

  @Test
  void stockLimits_arePromisedAsEnforced() throws Exception {
    assertThat(ProductInventory.MAX_QUANTITY).isEqualTo((long) Math.pow(10, 15));
    assertThat(contract()).contains("above 10^15 units").contains("from 0 to 10^15");
  }
}
