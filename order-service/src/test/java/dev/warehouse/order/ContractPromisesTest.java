package dev.warehouse.order;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.store.DynamoOrderRepository;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What the contract's comments promise about idempotency is what the code implements. */
class ContractPromisesTest {

  @Test
  void placeOrder_promisesTheRequestRecordsLifetime_andItsScope() throws Exception {
    String contract = Files.readString(Path.of(System.getProperty("project.root", ".."))
        .resolve("proto/src/main/proto/warehouse/order/v1/order_service.proto")).replaceAll("\\s*//\\s*", " ");
    long days = DynamoOrderRepository.REQUEST_RECORD_TTL.toDays();
    assertThat(contract)
        .contains("Safe to retry with the same request_id for " + days + " days")
        .contains("Request ids are scoped to the customer.")
        .contains("Scoped to the customer; remembered for " + days + " days.")
        .doesNotContain("however late");
  }
}
