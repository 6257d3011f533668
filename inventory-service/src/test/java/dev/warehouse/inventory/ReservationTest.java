package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.PreconditionFailure;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.CommitReservationRequest;
import dev.warehouse.inventory.v1.ConfirmReservationRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.ReleaseCause;
import dev.warehouse.inventory.v1.ReleaseReservationRequest;
import dev.warehouse.inventory.v1.Reservation;
import dev.warehouse.inventory.v1.ReservationLine;
import dev.warehouse.inventory.v1.ReservationState;
import dev.warehouse.inventory.v1.ReserveStockRequest;
import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.runtime.testing.StrictMoto;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ReservationService against the strict moto, with 30 % of transactions cancelled by an injected
 * conflict: units are held, committed and given back exactly once, whatever races.
 */
@Tag("integration")
class ReservationTest {

  private static InventoryFixture inventory;

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture();
    StrictMoto.table(inventory.table).conflictRate(0.3).apply();
  }

  @AfterAll
  static void stop() throws Exception {
    StrictMoto.reset(inventory.table);
    inventory.close();
  }

  static ReservationLine line(String product, String warehouse, long quantity) {
    return ReservationLine.newBuilder().setProductId(product).setWarehouseId(warehouse).setQuantity(quantity).build();
  }

  static ReserveStockRequest reserve(String order, ReservationLine... lines) {
    return ReserveStockRequest.newBuilder().setOrderId(order).addAllLines(List.of(lines)).build();
  }

  /**
   * A call of InventoryService, retried as its contract asks when injected conflicts outlast the data
   * layer's retries (ABORTED TRANSACTION_CONFLICT): only ReservationService retries whole rounds itself.
   */
  private static <T> T retryingConflicts(java.util.function.Supplier<T> call) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (StatusRuntimeException e) {
        if (attempt >= 5 || e.getStatus().getCode() != Status.Code.ABORTED || !reason(e).equals("TRANSACTION_CONFLICT")) {
          throw e;
        }
      }
    }
  }

  private static ProductInventory stocked(String product, String warehouse, long quantity) throws Exception {
    return retryingConflicts(() -> inventory.stock(product, warehouse, quantity));
  }

  private static ProductInventory stockOf(String product, String warehouse) {
    return inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId(warehouse).setConsistentRead(true).build());
  }

  private static <T> List<Object> concurrently(List<Callable<T>> calls) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(calls.size());
    try {
      List<Future<T>> futures = new ArrayList<>();
      for (Callable<T> call : calls) {
        futures.add(pool.submit(call));
      }
      List<Object> outcomes = new ArrayList<>();
      for (Future<T> f : futures) {
        try {
          outcomes.add(f.get());
        } catch (java.util.concurrent.ExecutionException e) {
          outcomes.add(e.getCause());
        }
      }
      return outcomes;
    } finally {
      pool.shutdownNow();
    }
  }

  static <T extends com.google.protobuf.Message> T detail(Throwable e, Class<T> type) throws Exception {
    for (Any any : StatusProto.fromThrowable(e).getDetailsList()) {
      if (any.is(type)) {
        return any.unpack(type);
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + e);
  }

  static String reason(Throwable e) throws Exception {
    return detail(e, ErrorInfo.class).getReason();
  }

  @ParameterizedTest
  @ValueSource(ints = {5, 1})
  void fortyConcurrentHolds_ofKUnits_holdExactlyK_theRestOutOfStock(int units) throws Exception {
    String product = id("P");
    stocked(product, "W1", units);
    List<Callable<Reservation>> calls = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String order = id("o" + i);
      calls.add(() -> inventory.reservations().reserveStock(reserve(order, line(product, "W1", 1))));
    }
    List<Object> outcomes = concurrently(calls);

    assertThat(outcomes.stream().filter(o -> o instanceof Reservation)).hasSize(units)
        .allSatisfy(r -> assertThat(((Reservation) r).getState()).isEqualTo(ReservationState.RESERVATION_STATE_HELD));
    List<Object> refused = outcomes.stream().filter(o -> !(o instanceof Reservation)).toList();
    assertThat(refused).hasSize(40 - units);
    for (Object o : refused) {
      assertThat(o).isInstanceOf(StatusRuntimeException.class);
      StatusRuntimeException e = (StatusRuntimeException) o;
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      assertThat(reason(e)).isEqualTo("OUT_OF_STOCK");
      PreconditionFailure failure = detail(e, PreconditionFailure.class);
      assertThat(failure.getViolationsList()).singleElement().satisfies(v -> {
        assertThat(v.getType()).isEqualTo("OUT_OF_STOCK");
        assertThat(v.getSubject()).isEqualTo("products/" + product + "/warehouses/W1");
        assertThat(v.getDescription()).contains("requested 1", "available 0");
      });
    }
    ProductInventory stock = stockOf(product, "W1");
    assertThat(stock.getQuantity()).isEqualTo(units);
    assertThat(stock.getReserved()).isEqualTo(units);
    assertThat(stock.getAvailable()).isZero();
    // Nothing available: low (reorder point 0), listed by A7 with its marker at 0 available.
    assertThat(inventory.stub().listLowStock(ListLowStockRequest.newBuilder().setPageSize(100).setConsistentRead(true).build())
        .getInventoriesList()).filteredOn(i -> i.getProductId().equals(product))
        .singleElement().satisfies(i -> {
          assertThat(i.getAvailable()).isZero();
          assertThat(i.getReserved()).isEqualTo(units);
        });
  }

  @Test
  void multiLineOrders_racingOverSharedProducts_neverHoldPartOfAnOrder() throws Exception {
    String a = id("P");
    String b = id("P");
    String c = id("P");
    stocked(a, "W1", 10);
    stocked(b, "W1", 10);
    stocked(c, "W1", 10);
    List<Callable<Reservation>> calls = new ArrayList<>();
    List<ReserveStockRequest> requests = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      // Each order takes 2 of a, and 3 of b or of c; all of them together want more than there is.
      ReserveStockRequest request = reserve(id("m" + i), line(a, "W1", 2), line(i % 2 == 0 ? b : c, "W1", 3));
      requests.add(request);
      calls.add(() -> inventory.reservations().reserveStock(request));
    }
    List<Object> outcomes = concurrently(calls);
    long heldA = 0;
    long heldB = 0;
    long heldC = 0;
    for (int i = 0; i < outcomes.size(); i++) {
      if (outcomes.get(i) instanceof Reservation r) {
        for (ReservationLine l : r.getLinesList()) {
          heldA += l.getProductId().equals(a) ? l.getQuantity() : 0;
          heldB += l.getProductId().equals(b) ? l.getQuantity() : 0;
          heldC += l.getProductId().equals(c) ? l.getQuantity() : 0;
        }
      } else {
        assertThat(reason((Throwable) outcomes.get(i))).isEqualTo("OUT_OF_STOCK");
        String refused = requests.get(i).getOrderId();
        assertThatThrownBy(() -> inventory.reservations().getReservation(GetReservationRequest.newBuilder()
            .setOrderId(refused).setConsistentRead(true).build()))
            .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_NOT_FOUND"));
      }
    }
    assertThat(heldA).isEqualTo(10); // 5 orders of 2: a runs out first
    assertThat(stockOf(a, "W1").getReserved()).isEqualTo(heldA);
    assertThat(stockOf(b, "W1").getReserved()).isEqualTo(heldB);
    assertThat(stockOf(c, "W1").getReserved()).isEqualTo(heldC);
    assertThat(heldB + heldC).isEqualTo(15);
  }

  @Test
  void duplicateLines_areMerged_and34Lines_areRefused() throws Exception {
    String product = id("P");
    stocked(product, "W1", 10);
    Reservation r = inventory.reservations().reserveStock(reserve(id("d"), line(product, "W1", 2), line(product, "W1", 3)));
    assertThat(r.getLinesList()).containsExactly(line(product, "W1", 5));
    assertThat(stockOf(product, "W1").getAvailable()).isEqualTo(5);

    ReserveStockRequest.Builder tooMany = ReserveStockRequest.newBuilder().setOrderId(id("big"));
    for (int i = 0; i < 34; i++) {
      tooMany.addLines(line(product, "W" + i, 1));
    }
    assertThatThrownBy(() -> inventory.reservations().reserveStock(tooMany.build())).satisfies(e -> {
      assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(detail(e, BadRequest.class).getFieldViolationsList()).singleElement().satisfies(v -> {
        assertThat(v.getField()).isEqualTo("lines");
        assertThat(v.getDescription()).contains("at most 33");
      });
    });
  }

  @Test
  void theSameReserve_sentTenTimesAtOnce_holdsOnce_andOtherLines_areAlreadyExists() throws Exception {
    String product = id("P");
    stocked(product, "W1", 100);
    ReserveStockRequest request = reserve(id("same"), line(product, "W1", 7));
    List<Callable<Reservation>> calls = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      calls.add(() -> inventory.reservations().reserveStock(request));
    }
    assertThat(concurrently(calls)).allSatisfy(o -> assertThat(o).isInstanceOf(Reservation.class));
    ProductInventory stock = stockOf(product, "W1");
    assertThat(stock.getReserved()).isEqualTo(7);
    assertThat(stock.getAvailable()).isEqualTo(93);

    assertThatThrownBy(() -> inventory.reservations().reserveStock(reserve(request.getOrderId(), line(product, "W1", 8))))
        .satisfies(e -> {
          assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
          assertThat(reason(e)).isEqualTo("RESERVATION_MISMATCH");
        });
    assertThat(stockOf(product, "W1").getReserved()).isEqualTo(7);
  }

  @Test
  void releasesRacingEachOther_giveTheUnitsBackOnce_andAReleaseAfter_answersAsItIs() throws Exception {
    String product = id("P");
    stocked(product, "W1", 10);
    String order = id("rel");
    inventory.reservations().reserveStock(reserve(order, line(product, "W1", 4)));
    List<Callable<Reservation>> calls = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      calls.add(() -> inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder().setOrderId(order).build()));
    }
    assertThat(concurrently(calls)).allSatisfy(o -> assertThat(((Reservation) o).getState())
        .isEqualTo(ReservationState.RESERVATION_STATE_RELEASED));
    Reservation again = inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder().setOrderId(order).build());
    assertThat(again.getReleaseCause()).as("unset: the fence").isEqualTo(ReleaseCause.RELEASE_CAUSE_ORDER_REJECTED);
    ProductInventory stock = stockOf(product, "W1");
    assertThat(stock.getReserved()).isZero();
    assertThat(stock.getAvailable()).isEqualTo(10);
    // A reserve after the release is refused: the order gave up.
    assertThatThrownBy(() -> inventory.reservations().reserveStock(reserve(order, line(product, "W1", 4))))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_RELEASED"));
  }

  @Test
  void aRejectionsRelease_neverUndoesAConfirm_onlyACancellationReleasesAConfirmedReservation() throws Exception {
    String product = id("P");
    stocked(product, "W1", 10);
    String order = id("fence");
    inventory.reservations().reserveStock(reserve(order, line(product, "W1", 4)));
    inventory.reservations().confirmReservation(ConfirmReservationRequest.newBuilder().setOrderId(order).build());
    for (ReleaseCause fence : List.of(ReleaseCause.RELEASE_CAUSE_ORDER_REJECTED, ReleaseCause.RELEASE_CAUSE_UNSPECIFIED)) {
      assertThatThrownBy(() -> inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder()
          .setOrderId(order).setCause(fence).build()))
          .satisfies(e -> {
            assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(reason(e)).isEqualTo("RESERVATION_CONFIRMED");
          });
    }
    assertThat(stockOf(product, "W1").getReserved()).as("still held for the placed order").isEqualTo(4);
    assertThatThrownBy(() -> inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder()
        .setOrderId(order).setCause(ReleaseCause.RELEASE_CAUSE_HOLD_EXPIRED).build()))
        .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
    Reservation cancelled = inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder()
        .setOrderId(order).setCause(ReleaseCause.RELEASE_CAUSE_ORDER_CANCELLED).build());
    assertThat(cancelled.getState()).isEqualTo(ReservationState.RESERVATION_STATE_RELEASED);
    assertThat(cancelled.getReleaseCause()).isEqualTo(ReleaseCause.RELEASE_CAUSE_ORDER_CANCELLED);
    assertThat(stockOf(product, "W1").getReserved()).isZero();
  }

  @Test
  void releaseBeforeReserve_leavesATombstone_soTheLateReserveHoldsNothing() throws Exception {
    String product = id("P");
    stocked(product, "W1", 10);
    String order = id("early");
    Reservation tombstone = inventory.reservations().releaseReservation(
        ReleaseReservationRequest.newBuilder().setOrderId(order).build());
    assertThat(tombstone.getState()).isEqualTo(ReservationState.RESERVATION_STATE_RELEASED);
    assertThat(tombstone.getReleaseCause()).isEqualTo(ReleaseCause.RELEASE_CAUSE_BEFORE_RESERVE);
    assertThat(tombstone.getLinesList()).isEmpty();
    assertThatThrownBy(() -> inventory.reservations().reserveStock(reserve(order, line(product, "W1", 3))))
        .satisfies(e -> {
          assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
          assertThat(reason(e)).isEqualTo("RESERVATION_RELEASED");
        });
    assertThat(stockOf(product, "W1").getReserved()).isZero();
  }

  @Test
  void commit_dropsQuantityAndReserved_andACommitAfterARelease_isRefused() throws Exception {
    String product = id("P");
    stocked(product, "W1", 10);
    String order = id("c");
    inventory.reservations().reserveStock(reserve(order, line(product, "W1", 3)));
    assertThatThrownBy(() -> inventory.reservations().commitReservation(CommitReservationRequest.newBuilder().setOrderId(order).build()))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_NOT_CONFIRMED"));
    assertThat(inventory.reservations().confirmReservation(ConfirmReservationRequest.newBuilder().setOrderId(order).build())
        .getState()).isEqualTo(ReservationState.RESERVATION_STATE_CONFIRMED);
    Reservation committed = inventory.reservations().commitReservation(CommitReservationRequest.newBuilder().setOrderId(order).build());
    assertThat(committed.getState()).isEqualTo(ReservationState.RESERVATION_STATE_COMMITTED);
    assertThat(inventory.reservations().commitReservation(CommitReservationRequest.newBuilder().setOrderId(order).build())
        .getState()).isEqualTo(ReservationState.RESERVATION_STATE_COMMITTED);
    ProductInventory stock = stockOf(product, "W1");
    assertThat(stock.getQuantity()).isEqualTo(7);
    assertThat(stock.getReserved()).isZero();
    assertThat(stock.getAvailable()).isEqualTo(7);
    assertThatThrownBy(() -> inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder().setOrderId(order).build()))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_COMMITTED"));

    String released = id("c");
    inventory.reservations().reserveStock(reserve(released, line(product, "W1", 2)));
    inventory.reservations().releaseReservation(ReleaseReservationRequest.newBuilder().setOrderId(released).build());
    assertThatThrownBy(() -> inventory.reservations().commitReservation(CommitReservationRequest.newBuilder().setOrderId(released).build()))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_RELEASED"));
    assertThatThrownBy(() -> inventory.reservations().confirmReservation(ConfirmReservationRequest.newBuilder().setOrderId(released).build()))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_RELEASED"));
    assertThatThrownBy(() -> inventory.reservations().confirmReservation(ConfirmReservationRequest.newBuilder().setOrderId(id("none")).build()))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("RESERVATION_NOT_FOUND"));
    assertThat(stockOf(product, "W1").getQuantity()).isEqualTo(7);
  }

  @Test
  void putAndAdjust_belowTheReservedUnits_areStockReserved_andWriteNothing() throws Exception {
    String product = id("P");
    stocked(product, "W1", 10);
    inventory.reservations().reserveStock(reserve(id("r"), line(product, "W1", 6)));
    // Refused before any write, so no injected conflict can stand in the way.
    assertThatThrownBy(() -> inventory.stock(product, "W1", 5)).satisfies(e -> {
      assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      assertThat(reason(e)).isEqualTo("STOCK_RESERVED");
    });
    assertThatThrownBy(() -> inventory.stub().adjustStock(AdjustStockRequest.newBuilder().setProductId(product)
        .setWarehouseId("W1").setDelta(-5).setRequestId(id("a")).build()))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("STOCK_RESERVED"));
    assertThatThrownBy(() -> inventory.stub().adjustStock(AdjustStockRequest.newBuilder().setProductId(product)
        .setWarehouseId("W1").setDelta(-11).setRequestId(id("a")).build()))
        .satisfies(e -> assertThat(reason(e)).isEqualTo("INSUFFICIENT_STOCK"));
    ProductInventory stock = stockOf(product, "W1");
    assertThat(stock.getQuantity()).isEqualTo(10);
    assertThat(stock.getReserved()).isEqualTo(6);
    // Down to exactly the reserved units is allowed, and keeps them.
    ProductInventory put = retryingConflicts(() -> inventory.stub().putProductInventory(PutProductInventoryRequest.newBuilder()
        .setInventory(ProductInventory.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(6)).build()));
    assertThat(put.getReserved()).isEqualTo(6);
    assertThat(put.getAvailable()).isZero();
  }

  @Test
  void unprocessedKeysOfTheBatchRead_areAskedForAgain_andWhenTheyStayUnprocessed_theCallIsResourceExhausted()
      throws Exception {
    String product = id("P");
    stocked(product, "W1", 10);
    inventory.proxy.inject("BatchGetItem", DynamoFaultProxy.Fault.UNPROCESSED_KEYS, 2);
    Reservation held = inventory.reservations().reserveStock(reserve(id("u"), line(product, "W1", 1)));
    assertThat(held.getState()).isEqualTo(ReservationState.RESERVATION_STATE_HELD);
    assertThat(stockOf(product, "W1").getReserved()).isEqualTo(1);

    inventory.proxy.inject("BatchGetItem", DynamoFaultProxy.Fault.UNPROCESSED_KEYS, 1000);
    try {
      assertThatThrownBy(() -> inventory.reservations().reserveStock(reserve(id("u"), line(product, "W1", 1))))
          .satisfies(e -> {
            assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(reason(e)).isEqualTo("DATABASE_THROTTLED");
          });
    } finally {
      inventory.proxy.clear();
    }
    assertThat(stockOf(product, "W1").getReserved()).isEqualTo(1);
  }
}
