package dev.warehouse.inventory;

import static dev.warehouse.testing.Statuses.assertInvalid;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ListWarehouseProductsRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.inventory.v1.SerialItem;
import java.time.Duration;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every kind of bad input is INVALID_ARGUMENT with a BadRequest naming each bad field, and reaches
 * no further than validation: not one DynamoDB request is made, so nothing can be written.
 */
@Tag("integration")
class InvalidInputTest {

  private static InventoryFixture inventory;

  @BeforeAll
  static void start() throws Exception {
    // No expiry sweep during the test: its queries, slow on a loaded machine, would land among the requests of
    // the invalid call whose "nothing sent" is checked.
    inventory = new InventoryFixture(InventorySettings.DEFAULT.withReservations(Duration.ofSeconds(60), Duration.ofHours(1)));
  }

  @AfterAll
  static void stop() throws Exception {
    inventory.close();
  }

  @BeforeEach
  void clearRecorder() {
    inventory.recorder.clear();
  }

  static Stream<Arguments> badRequests() {
    String tooLong = "x".repeat(65);
    return Stream.of(
        bad("empty serial", () -> inventory.stub().getSerialItem(GetSerialItemRequest.getDefaultInstance()), "serial_number"),
        bad("key delimiter in serial", () -> inventory.stub().getSerialItem(
            GetSerialItemRequest.newBuilder().setSerialNumber("SN#1").build()), "serial_number"),
        bad("over-long serial", () -> inventory.stub().getSerialItem(
            GetSerialItemRequest.newBuilder().setSerialNumber(tooLong).build()), "serial_number"),
        bad("control character", () -> inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
            .setProductId("P1\n").setWarehouseId("W1").build()), "product_id"),
        bad("forged sort key", () -> inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
            .setProductId("P1").setWarehouseId("W1#REQUEST").build()), "warehouse_id"),
        bad("both ids missing", () -> inventory.stub().getProductInventory(
            GetProductInventoryRequest.getDefaultInstance()), "product_id", "warehouse_id"),
        bad("negative page size", () -> inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
            .setProductId("P1").setPageSize(-1).build()), "page_size"),
        bad("bad warehouse and strong index read", () -> inventory.stub().listWarehouseProducts(
            ListWarehouseProductsRequest.newBuilder().setWarehouseId("W 1").setConsistentRead(true).build()),
            "warehouse_id", "consistent_read"),
        bad("garbage page token", () -> inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
            .setProductId("P1").setPageToken("%%%").build()), "page_token"),
        bad("missing item", () -> inventory.stub().putSerialItem(PutSerialItemRequest.getDefaultInstance()), "item"),
        bad("bad item fields", () -> inventory.stub().putSerialItem(PutSerialItemRequest.newBuilder()
            .setItem(SerialItem.newBuilder().setSerialNumber("SN#2").setWarehouseId(tooLong)
                .setDescription("line\u0007")).build()),
            "item.serial_number", "item.product_id", "item.warehouse_id", "item.description"),
        bad("negative quantity", () -> inventory.stub().putProductInventory(PutProductInventoryRequest.newBuilder()
            .setInventory(ProductInventory.newBuilder().setProductId("P1").setWarehouseId("W1").setQuantity(-1))
            .build()), "inventory.quantity"),
        bad("missing inventory", () -> inventory.stub().putProductInventory(
            PutProductInventoryRequest.getDefaultInstance()), "inventory"),
        bad("zero delta, no request id", () -> inventory.stub().adjustStock(AdjustStockRequest.newBuilder()
            .setProductId("P1").setWarehouseId("W1").build()), "delta", "request_id"),
        bad("huge delta", () -> inventory.stub().adjustStock(AdjustStockRequest.newBuilder()
            .setProductId("P1").setWarehouseId("W1").setDelta(Long.MIN_VALUE).setRequestId("r1").build()), "delta"));
  }

  private static Arguments bad(String name, ThrowingCallable call, String... fields) {
    return Arguments.of(name, call, fields);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badRequests")
  void badInput_isInvalidArgument_namingEachField_andTouchesNoData(String name, ThrowingCallable call, String[] fields) {
    assertInvalid(call, fields);
    assertThat(inventory.recorder.requests()).as("DynamoDB requests made for an invalid call").isEmpty();
  }
}
