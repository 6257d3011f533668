package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static dev.warehouse.testing.Statuses.assertInvalid;
import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.detail;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.ErrorInfo;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.testing.CallBounds;
import dev.warehouse.runtime.testing.DynamoFaultProxy.Fault;
import dev.warehouse.runtime.testing.StrictMoto;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * AdjustStock against DynamoDB's own behaviour (through the strict stand-in and the fault proxy):
 * duplicates, conflicts, throttling, late answers, the stock ceiling, and the caller's deadline.
 */
@Tag("integration")
class InventoryFaultsTest {

  private static final String TRANSACT = "TransactWriteItems";
  /** Short, so persistent faults end quickly: each attempt gets a quarter of it. */
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  private static InventoryFixture inventory;

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture(CALL_TIMEOUT);
  }

  @AfterEach
  void clearFaults() {
    inventory.proxy.clear();
    StrictMoto.reset(inventory.table);
  }

  @AfterAll
  static void stop() throws Exception {
    inventory.close();
  }

  private static AdjustStockRequest adjust(String product, long delta, String requestId) {
    return AdjustStockRequest.newBuilder()
        .setProductId(product).setWarehouseId("W1").setDelta(delta).setRequestId(requestId).build();
  }

  private static long quantity(String product) {
    return inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId("W1").setConsistentRead(true).build()).getQuantity();
  }

  @Test
  void adjustStock_duplicatesArrivingWhileTheFirstIsStillRunning_applyOnce() {
    // DynamoDB takes a while to apply a transaction; the stand-in holds each one in flight for 300 ms.
    StrictMoto.table(inventory.table).transactionLatency(Duration.ofMillis(300)).apply();
    String product = id("P");
    inventory.stock(product, "W1", 100);
    AdjustStockRequest pick = adjust(product, -5, id("pick"));

    List<CompletableFuture<dev.warehouse.inventory.v1.ProductInventory>> calls = IntStream.range(0, 4)
        .mapToObj(i -> CompletableFuture.supplyAsync(() -> inventory.stub().adjustStock(pick)))
        .toList();

    assertThat(calls).allSatisfy(call -> assertThat(call.join().getQuantity()).isEqualTo(95));
    assertThat(quantity(product)).isEqualTo(95);
  }

  @Test
  void adjustStock_transientConflicts_areRetried() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    int before = inventory.proxy.calls(TRANSACT);
    inventory.proxy.inject(TRANSACT, Fault.TRANSACTION_CONFLICT, 2);
    assertThat(inventory.stub().adjustStock(adjust(product, -1, id("r"))).getQuantity()).isEqualTo(9);
    assertThat(inventory.proxy.calls(TRANSACT) - before).as("transaction attempts").isEqualTo(3);
  }

  @Test
  void adjustStock_persistentConflicts_areAborted_afterTheBoundedAttempts() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    StrictMoto.table(inventory.table).conflictRate(1.0).apply();
    int before = inventory.proxy.calls(TRANSACT);
    assertStatus(() -> inventory.stub().adjustStock(adjust(product, -1, id("r"))), Status.Code.ABORTED, "TRANSACTION_CONFLICT");
    assertThat(inventory.proxy.calls(TRANSACT) - before).isEqualTo(DynamoCalls.MAX_ATTEMPTS);
    StrictMoto.reset(inventory.table);
    assertThat(quantity(product)).isEqualTo(10);
  }

  @Test
  void adjustStock_throttledTransaction_isResourceExhausted() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    inventory.proxy.inject(TRANSACT, Fault.TRANSACTION_THROTTLED, Integer.MAX_VALUE);
    assertStatus(() -> inventory.stub().adjustStock(adjust(product, -1, id("r"))),
        Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED");
    inventory.proxy.clear();
    assertThat(quantity(product)).isEqualTo(10);
  }

  @Test
  void adjustStock_whoseAttemptCommittedButAnsweredLate_isAppliedOnce() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    // The first attempt is applied at once but answered after its attempt timeout (a quarter of 2 s):
    // the retry carries the same client request token, so DynamoDB answers it without applying it again.
    inventory.proxy.answerLate(TRANSACT, Duration.ofMillis(800), 1);
    assertThat(inventory.stub().adjustStock(adjust(product, -3, id("r"))).getQuantity()).isEqualTo(7);
    assertThat(quantity(product)).isEqualTo(7);
  }

  @Test
  void putProductInventory_refusesMoreThanTheCeiling() {
    assertInvalid(() -> inventory.stock(id("P"), "W1", Long.MAX_VALUE), "inventory.quantity");
    assertInvalid(() -> inventory.stock(id("P"), "W1", ProductInventory.MAX_QUANTITY + 1), "inventory.quantity");
  }

  @Test
  void adjustStock_pastTheCeiling_isFailedPrecondition_andTheStockStaysReadable() {
    String product = id("P");
    inventory.stock(product, "W1", ProductInventory.MAX_QUANTITY - 1);
    assertThat(inventory.stub().adjustStock(adjust(product, 1, id("r"))).getQuantity()).isEqualTo(ProductInventory.MAX_QUANTITY);

    StatusRuntimeException refused = failure(() -> inventory.stub().adjustStock(adjust(product, 1, id("r"))));
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    ErrorInfo info = detail(refused, ErrorInfo.class);
    assertThat(info.getReason()).isEqualTo("STOCK_LIMIT_EXCEEDED");
    assertThat(info.getMetadataMap()).containsEntry("available", Long.toString(ProductInventory.MAX_QUANTITY))
        .containsEntry("max_quantity", Long.toString(ProductInventory.MAX_QUANTITY));

    assertThat(quantity(product)).isEqualTo(ProductInventory.MAX_QUANTITY);
    assertThat(inventory.stub().listProductWarehouses(ListProductWarehousesRequest.newBuilder()
        .setProductId(product).setConsistentRead(true).build()).getInventories(0).getQuantity())
        .isEqualTo(ProductInventory.MAX_QUANTITY);
  }

  @Test
  void adjustStock_againstADatabaseThatNeverAnswers_stopsAtTheCallersDeadline() {
    String product = id("P");
    inventory.stock(product, "W1", 10);
    inventory.recorder.clear();
    inventory.proxy.delay(TRANSACT, Duration.ofSeconds(30), Integer.MAX_VALUE);
    long started = System.nanoTime();
    assertThat(failure(() -> inventory.stub().withDeadlineAfter(1, TimeUnit.SECONDS).adjustStock(adjust(product, -1, id("r"))))
        .getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    CallBounds.assertNoWorkPast(inventory.recorder, started, Duration.ofMillis(1200));
  }
}
