package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static dev.warehouse.inventory.ReservationTest.line;
import static dev.warehouse.inventory.ReservationTest.reserve;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.ConfirmReservationRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.ListExpiredHoldsRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.ReleaseCause;
import dev.warehouse.inventory.v1.Reservation;
import dev.warehouse.inventory.v1.ReservationState;
import dev.warehouse.testing.Eventually;
import dev.warehouse.runtime.testing.TestServices;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Reservations over time, through the service's own expiry loop (a sweep every second), and on stock
 * records written before reservations existed.
 */
@Tag("integration")
class ReservationLifecycleTest {

  private static InventoryFixture inventory;
  private static DynamoDbAsyncClient dynamo;

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture(InventorySettings.DEFAULT.withReservations(java.time.Duration.ofSeconds(60),
        java.time.Duration.ofSeconds(1)));
    dynamo = TestServices.dynamo(inventory.table);
  }

  @AfterAll
  static void stop() throws Exception {
    dynamo.close();
    inventory.close();
  }

  private static ProductInventory stockOf(String product) {
    return inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId("W1").setConsistentRead(true).build());
  }

  private static Reservation reservation(String order) {
    return inventory.reservations().getReservation(GetReservationRequest.newBuilder().setOrderId(order)
        .setConsistentRead(true).build());
  }

  @Test
  void anUnconfirmedHold_isReleasedByTheServiceItself_andAConfirmedOneStays() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    String abandoned = id("o");
    String confirmed = id("o");
    Duration second = Duration.newBuilder().setSeconds(1).build();
    inventory.reservations().reserveStock(reserve(abandoned, line(product, "W1", 3)).toBuilder().setHoldDuration(second).build());
    inventory.reservations().reserveStock(reserve(confirmed, line(product, "W1", 4)).toBuilder().setHoldDuration(second).build());
    inventory.reservations().confirmReservation(ConfirmReservationRequest.newBuilder().setOrderId(confirmed).build());

    Reservation released = Eventually.await(() -> reservation(abandoned),
        r -> r.getState() == ReservationState.RESERVATION_STATE_RELEASED);
    assertThat(released.getReleaseCause()).isEqualTo(ReleaseCause.RELEASE_CAUSE_HOLD_EXPIRED);
    assertThat(reservation(confirmed).getState()).isEqualTo(ReservationState.RESERVATION_STATE_CONFIRMED);
    ProductInventory stock = stockOf(product);
    assertThat(stock.getReserved()).isEqualTo(4);
    assertThat(stock.getAvailable()).isEqualTo(6);
    // Neither is listed as an expired hold any more: the release and the confirm took them off the index.
    Eventually.await(() -> inventory.reservations().listExpiredHolds(ListExpiredHoldsRequest.newBuilder().setPageSize(100).build()),
        page -> page.getReservationsList().stream().noneMatch(r -> r.getOrderId().equals(abandoned) || r.getOrderId().equals(confirmed)));
  }

  @Test
  void stockWrittenBeforeReservations_isReadAsNothingReserved_andEveryWriteWorksOnIt() {
    String product = id("P");
    dynamo.putItem(p -> p.tableName(inventory.table).item(Map.of(
        "PK", AttributeValue.fromS(InventoryKeys.stock(product, "W1").pk()),
        "SK", AttributeValue.fromS(InventoryKeys.stock(product, "W1").sk()),
        "entity", AttributeValue.fromS("ProductInventory"),
        "product_id", AttributeValue.fromS(product), "warehouse_id", AttributeValue.fromS("W1"),
        "quantity", AttributeValue.fromN("20"), "update_time", AttributeValue.fromS(Instant.now().toString())))).join();
    ProductInventory old = stockOf(product);
    assertThat(old.getReserved()).isZero();
    assertThat(old.getAvailable()).isEqualTo(20);

    inventory.reservations().reserveStock(reserve(id("o"), line(product, "W1", 5)));
    ProductInventory held = stockOf(product);
    assertThat(held.getQuantity()).isEqualTo(20);
    assertThat(held.getReserved()).isEqualTo(5);
    assertThat(held.getAvailable()).isEqualTo(15);

    String other = id("P");
    dynamo.putItem(p -> p.tableName(inventory.table).item(Map.of(
        "PK", AttributeValue.fromS(InventoryKeys.stock(other, "W1").pk()),
        "SK", AttributeValue.fromS(InventoryKeys.stock(other, "W1").sk()),
        "entity", AttributeValue.fromS("ProductInventory"),
        "product_id", AttributeValue.fromS(other), "warehouse_id", AttributeValue.fromS("W1"),
        "quantity", AttributeValue.fromN("8"), "update_time", AttributeValue.fromS(Instant.now().toString())))).join();
    ProductInventory adjusted = inventory.stub().adjustStock(AdjustStockRequest.newBuilder().setProductId(other)
        .setWarehouseId("W1").setDelta(-3).setRequestId(id("r")).build());
    assertThat(adjusted.getQuantity()).isEqualTo(5);
    assertThat(adjusted.getAvailable()).isEqualTo(5);
    assertThat(adjusted.getReserved()).isZero();
  }
}
