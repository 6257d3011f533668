package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static dev.warehouse.testing.Statuses.assertInvalid;
import static dev.warehouse.testing.Statuses.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesResponse;
import dev.warehouse.inventory.v1.ListWarehouseProductsRequest;
import dev.warehouse.inventory.v1.ListWarehouseProductsResponse;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.testing.Eventually;
import dev.warehouse.testing.MetricsScrape;
import dev.warehouse.runtime.testing.StrictMoto;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A1-A4 through a real gRPC channel, against moto. */
@Tag("integration")
class InventoryReadsTest {

  private static InventoryFixture inventory;

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture();
    StrictMoto.table(inventory.table).staleReads(1.0, LAG).apply();
  }

  @AfterAll
  static void stop() throws Exception {
    StrictMoto.reset(inventory.table);
    inventory.close();
  }

  /** The stand-in's lag for this class's table: long enough that "right after a write" holds on a slow machine. */
  private static final Duration LAG = Duration.ofSeconds(1);

  @Test
  void getSerialItem_returnsTheStoredItem_eventuallyAndStrongly() {
    String serial = id("SN");
    SerialItem stored = inventory.stub().putSerialItem(PutSerialItemRequest.newBuilder()
        .setItem(SerialItem.newBuilder().setSerialNumber(serial).setProductId("P100").setWarehouseId("W1")
            .setDescription("forklift battery"))
        .build());
    assertThat(stored.hasUpdateTime()).isTrue();

    GetSerialItemRequest eventualRead = GetSerialItemRequest.newBuilder().setSerialNumber(serial).build();
    // Right after the write, an eventually consistent read may miss it (here the stand-in lags 1 s);
    // a strongly consistent one never does.
    assertStatus(() -> inventory.stub().getSerialItem(eventualRead), Status.Code.NOT_FOUND, "SERIAL_ITEM_NOT_FOUND");
    SerialItem strong = inventory.stub().getSerialItem(eventualRead.toBuilder().setConsistentRead(true).build());
    assertThat(strong).isEqualTo(stored);
    assertThat(Eventually.await(() -> inventory.stub().getSerialItem(eventualRead))).isEqualTo(stored);
  }

  @Test
  void getSerialItem_isNotFound_forAnUnknownSerial() {
    assertStatus(() -> inventory.stub().getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber(id("SN")).build()),
        Status.Code.NOT_FOUND, "SERIAL_ITEM_NOT_FOUND");
  }

  @Test
  void getProductInventory_returnsTheStock_orNotFound() {
    String product = id("P");
    inventory.stock(product, "W1", 12);
    ProductInventory found = inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId("W1").setConsistentRead(true).build());
    assertThat(found.getQuantity()).isEqualTo(12);
    assertThat(found.getWarehouseId()).isEqualTo("W1");

    assertStatus(() -> inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
            .setProductId(product).setWarehouseId("W2").build()),
        Status.Code.NOT_FOUND, "PRODUCT_INVENTORY_NOT_FOUND");
  }

  @Test
  void listProductWarehouses_pagesThroughExactlyTheProductsWarehouses() {
    String product = id("P");
    List<String> warehouses = List.of("W1", "W2", "W3", "W4", "W5", "W6", "W7");
    warehouses.forEach(w -> inventory.stock(product, w, 5));
    // Neighbours that must not leak in: another product in the same warehouses, and a request record
    // that lives in the product's own partition.
    inventory.stock(product + "0", "W1", 1);
    inventory.stub().adjustStock(AdjustStockRequest.newBuilder()
        .setProductId(product).setWarehouseId("W1").setDelta(1).setRequestId(id("r")).build());

    List<ListProductWarehousesResponse> pages = new ArrayList<>();
    String token = "";
    do {
      ListProductWarehousesResponse page = inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
          .setProductId(product).setPageSize(3).setPageToken(token).setConsistentRead(true).build());
      pages.add(page);
      token = page.getNextPageToken();
    } while (!token.isEmpty() && pages.size() < 10);

    assertThat(pages).extracting(ListProductWarehousesResponse::getInventoriesCount).containsExactly(3, 3, 1);
    assertThat(pages.stream().flatMap(p -> p.getInventoriesList().stream()).map(ProductInventory::getWarehouseId))
        .containsExactlyElementsOf(warehouses);
    assertThat(pages.stream().flatMap(p -> p.getInventoriesList().stream()).map(ProductInventory::getProductId))
        .containsOnly(product);
  }

  @Test
  void listProductWarehouses_endsWithoutAnEmptyTrailingPage_whenTheLastPageIsFull() {
    String product = id("P");
    List.of("W1", "W2", "W3", "W4").forEach(w -> inventory.stock(product, w, 1));
    ListProductWarehousesResponse first = inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
        .setProductId(product).setPageSize(2).setConsistentRead(true).build());
    ListProductWarehousesResponse second = inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
        .setProductId(product).setPageSize(2).setPageToken(first.getNextPageToken()).setConsistentRead(true).build());
    assertThat(first.getNextPageToken()).isNotEmpty();
    assertThat(second.getInventoriesCount()).isEqualTo(2);
    assertThat(second.getNextPageToken()).isEmpty();
  }

  @Test
  void listProductWarehouses_usesTheDefaultPageSize_whenZero() {
    String product = id("P");
    for (int w = 0; w < 27; w++) {
      inventory.stock(product, String.format("W%02d", w), 1);
    }
    ListProductWarehousesResponse page = inventory.stub().listProductWarehouses(
        ListProductWarehousesRequest.newBuilder().setProductId(product).setConsistentRead(true).build());
    assertThat(page.getInventoriesCount()).isEqualTo(25);
    assertThat(page.getNextPageToken()).isNotEmpty();
    ListProductWarehousesResponse huge = inventory.stub().listProductWarehouses(
        ListProductWarehousesRequest.newBuilder().setProductId(product).setPageSize(1_000_000).setConsistentRead(true).build());
    assertThat(huge.getInventoriesCount()).isEqualTo(27);
  }

  @Test
  void listWarehouseProducts_readsTheSecondDoor_inProductOrder() {
    String warehouse = id("W");
    List<String> products = List.of("P1", "P2", "P3", "P4", "P5");
    // A lag longer than the six writes take, even on a loaded machine, so that the first read lands in it.
    StrictMoto.table(inventory.table).staleReads(1.0, Duration.ofSeconds(6)).apply();
    ListWarehouseProductsRequest firstPage = ListWarehouseProductsRequest.newBuilder().setWarehouseId(warehouse).build();
    try {
      products.forEach(p -> inventory.stock(p, warehouse, 3));
      inventory.stock("P1", warehouse + "0", 3);

      // A4 reads an index, which is eventually consistent only: right after the writes it lags behind
      // them (here the stand-in answers as of 6 s ago), so a reader waits for it to catch up.
      assertThat(inventory.stub().listWarehouseProducts(firstPage).getInventoriesCount()).as("right after the writes").isZero();
    } finally {
      StrictMoto.table(inventory.table).staleReads(1.0, LAG).apply();
    }
    Eventually.await(() -> inventory.stub().listWarehouseProducts(firstPage), page -> page.getInventoriesCount() == 5);

    List<String> seen = new ArrayList<>();
    String token = "";
    int calls = 0;
    do {
      ListWarehouseProductsResponse page = inventory.stub().listWarehouseProducts(ListWarehouseProductsRequest.newBuilder()
          .setWarehouseId(warehouse).setPageSize(2).setPageToken(token).build());
      page.getInventoriesList().forEach(i -> {
        assertThat(i.getWarehouseId()).isEqualTo(warehouse);
        seen.add(i.getProductId());
      });
      token = page.getNextPageToken();
      calls++;
    } while (!token.isEmpty() && calls < 10);
    assertThat(seen).containsExactlyElementsOf(products);
    assertThat(calls).isEqualTo(3);
  }

  @Test
  void listWarehouseProducts_refusesStrongReads() {
    assertInvalid(() -> inventory.stub().listWarehouseProducts(ListWarehouseProductsRequest.newBuilder()
        .setWarehouseId("W1").setConsistentRead(true).build()), "consistent_read");
  }

  @Test
  void dynamoMetrics_showLatencyCapacityAndItemsPerAccessPattern() {
    String product = id("P");
    String warehouse = id("W");
    inventory.stock(product, warehouse, 2);
    inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setConsistentRead(true).build());
    inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder().setProductId(product).build());
    inventory.stub().listWarehouseProducts(ListWarehouseProductsRequest.newBuilder().setWarehouseId(warehouse).build());

    String metrics = MetricsScrape.scrape(inventory.process.metricsPort());
    String labels = "application=\"inventory-service\",operation=\"%s\",";
    assertThat(metrics)
        .contains("dynamodb_client_request_duration_seconds_bucket{" + labels.formatted("GetItem") + "outcome=\"success\",pattern=\"A2\"")
        .contains("dynamodb_client_request_duration_seconds_bucket{" + labels.formatted("Query") + "outcome=\"success\",pattern=\"A4\"")
        .contains("dynamodb_consumed_capacity_units_total{" + labels.formatted("Query").replace("operation", "kind=\"read\",operation") + "pattern=\"A3\"}")
        .contains("dynamodb_consumed_capacity_units_total{application=\"inventory-service\",kind=\"read\",operation=\"GetItem\",pattern=\"W2\"}")
        .contains("dynamodb_client_request_duration_seconds_bucket{" + labels.formatted("TransactWriteItems") + "outcome=\"success\",pattern=\"W2\"")
        .contains("dynamodb_items_examined_total{" + labels.formatted("Query") + "pattern=\"A4\"}")
        .contains("dynamodb_items_returned_total{" + labels.formatted("Query") + "pattern=\"A3\"}")
        .contains("grpc_server_processing_duration_seconds_bucket{application=\"inventory-service\",method=\"GetProductInventory\"");
  }

  @Test
  void pageTokens_areRefused_whenEditedForgedOrForeign() {
    String product = id("P");
    String other = id("P");
    List.of("W1", "W2", "W3").forEach(w -> {
      inventory.stock(product, w, 1);
      inventory.stock(other, w, 1);
    });
    String token = inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
        .setProductId(product).setPageSize(1).setConsistentRead(true).build()).getNextPageToken();
    assertThat(token).isNotEmpty();

    // Another product's partition: the token is sealed to the product it was issued for.
    assertInvalid(() -> inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
        .setProductId(other).setPageSize(1).setPageToken(token).build()), "page_token");
    // Another route: an A3 token on A4.
    assertInvalid(() -> inventory.stub().listWarehouseProducts(ListWarehouseProductsRequest.newBuilder()
        .setWarehouseId("W1").setPageToken(token).build()), "page_token");
    // Edited bytes.
    byte[] raw = Base64.getUrlDecoder().decode(token);
    raw[raw.length - 1] ^= 0x10;
    String edited = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
    assertInvalid(() -> inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
        .setProductId(product).setPageToken(edited).build()), "page_token");
    // A forged, readable continuation key.
    String forged = Base64.getUrlEncoder().encodeToString(
        ("{\"PK\":\"PRODUCT#" + other + "\",\"SK\":\"WAREHOUSE#W1\"}").getBytes());
    assertInvalid(() -> inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
        .setProductId(product).setPageToken(forged).build()), "page_token");
  }
}
