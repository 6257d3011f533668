package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.detail;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.ErrorInfo;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** PutProductInventory and AdjustStock: atomic, conditional, applied once per request id. */
@Tag("integration")
class InventoryWritesTest {

  private static InventoryFixture inventory;

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture();
  }

  @AfterAll
  static void stop() throws Exception {
    inventory.close();
  }

  private static AdjustStockRequest adjust(String product, String warehouse, long delta, String requestId) {
    return AdjustStockRequest.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setDelta(delta).setRequestId(requestId).build();
  }

  private static long quantity(String product, String warehouse) {
    return inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setConsistentRead(true).build()).getQuantity();
  }

  @Test
  void putProductInventory_replacesTheStock() {
    String product = id("P");
    inventory.stock(product, "W1", 4);
    ProductInventory replaced = inventory.stock(product, "W1", 9);
    assertThat(replaced.getQuantity()).isEqualTo(9);
    assertThat(quantity(product, "W1")).isEqualTo(9);
  }

  @Test
  void adjustStock_addsAndRemoves_andReturnsTheNewStock() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    assertThat(inventory.stub().adjustStock(adjust(product, "W1", 5, id("r"))).getQuantity()).isEqualTo(15);
    assertThat(inventory.stub().adjustStock(adjust(product, "W1", -15, id("r"))).getQuantity()).isZero();
    assertThat(quantity(product, "W1")).isZero();
  }

  @Test
  void adjustStock_refusesToGoBelowZero_andWritesNothing() {
    String product = id("P");
    inventory.stock(product, "W1", 3);
    StatusRuntimeException e = failure(() -> inventory.stub().adjustStock(adjust(product, "W1", -4, id("r"))));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    ErrorInfo info = detail(e, ErrorInfo.class);
    assertThat(info.getReason()).isEqualTo("INSUFFICIENT_STOCK");
    assertThat(info.getMetadataMap()).containsEntry("available", "3").containsEntry("requested", "4");
    assertThat(quantity(product, "W1")).isEqualTo(3);
  }

  @Test
  void adjustStock_isNotFound_whenTheProductIsNotStockedThere() {
    assertStatus(() -> inventory.stub().adjustStock(adjust(id("P"), "W1", 1, id("r"))),
        Status.Code.NOT_FOUND, "PRODUCT_INVENTORY_NOT_FOUND");
  }

  @Test
  void adjustStock_appliesOnce_whenRequestIdReplayed() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    String requestId = id("r");
    ProductInventory first = inventory.stub().adjustStock(adjust(product, "W1", -3, requestId));
    ProductInventory replay = inventory.stub().adjustStock(adjust(product, "W1", -3, requestId));
    assertThat(first.getQuantity()).isEqualTo(7);
    assertThat(replay.getQuantity()).isEqualTo(7);
    assertThat(quantity(product, "W1")).isEqualTo(7);
  }

  @Test
  void adjustStock_isAlreadyExists_whenRequestIdReusedForAnotherChange() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    String requestId = id("r");
    inventory.stub().adjustStock(adjust(product, "W1", -3, requestId));
    assertStatus(() -> inventory.stub().adjustStock(adjust(product, "W1", -4, requestId)),
        Status.Code.ALREADY_EXISTS, "REQUEST_ID_REUSED");
    assertThat(quantity(product, "W1")).isEqualTo(7);
  }

  @Test
  void adjustStock_atTheZeroBoundary_underConcurrency_sellsExactlyTheStock() throws Exception {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    int callers = 20;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    List<Future<Status.Code>> outcomes = new ArrayList<>();
    for (int i = 0; i < callers; i++) {
      Callable<Status.Code> call = () -> {
        start.await();
        try {
          inventory.stub().adjustStock(adjust(product, "W1", -1, id("r")));
          return Status.Code.OK;
        } catch (StatusRuntimeException e) {
          return e.getStatus().getCode();
        }
      };
      outcomes.add(pool.submit(call));
    }
    start.countDown();
    List<Status.Code> codes = new ArrayList<>();
    for (Future<Status.Code> outcome : outcomes) {
      codes.add(outcome.get());
    }
    pool.shutdown();

    assertThat(codes).filteredOn(c -> c == Status.Code.OK).hasSize(10);
    assertThat(codes).filteredOn(c -> c == Status.Code.FAILED_PRECONDITION).hasSize(10);
    assertThat(quantity(product, "W1")).isZero();
  }

  @Test
  void adjustStock_concurrentReplaysOfOneRequestId_applyOnce() throws Exception {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    String requestId = id("r");
    ExecutorService pool = Executors.newFixedThreadPool(10);
    List<Future<Long>> answers = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      answers.add(pool.submit(() -> inventory.stub().adjustStock(adjust(product, "W1", -2, requestId)).getQuantity()));
    }
    for (Future<Long> answer : answers) {
      assertThat(answer.get()).isEqualTo(8);
    }
    pool.shutdown();
    assertThat(quantity(product, "W1")).isEqualTo(8);
  }
}
