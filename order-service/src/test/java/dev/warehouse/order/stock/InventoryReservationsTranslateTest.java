package dev.warehouse.order.stock;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dev.warehouse.inventory.domain.InventoryService;
import dev.warehouse.inventory.v1.StockShortage;
import dev.warehouse.inventory.v1.StockShortages;
import dev.warehouse.order.domain.NotStockedException;
import dev.warehouse.order.domain.OutOfStockException;
import dev.warehouse.order.domain.Shortage;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.error.UnavailableException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The inventory's answers, as the order domain hears them: each keeps its meaning (contention ABORTED with a
 * retry hint, unreachability UNAVAILABLE, a fault of ours INTERNAL, never "retry"), and a shortage's numbers
 * are read from the typed detail, not from text.
 */
class InventoryReservationsTranslateTest {

  private static Throwable refusal(boolean withRetryInfo) {
    com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder()
        .setCode(Code.RESOURCE_EXHAUSTED_VALUE).setMessage("busy")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("OVERLOADED").setDomain("warehouse.dev").build()));
    if (withRetryInfo) {
      status.addDetails(Any.pack(RetryInfo.newBuilder()
          .setRetryDelay(com.google.protobuf.Duration.newBuilder().setNanos(250_000_000)).build()));
    }
    return StatusProto.toStatusRuntimeException(status.build());
  }

  @Test
  void anOverloadedInventory_keepsItsReasonAndRetryHint_orTheDefaultHint() {
    RuntimeException hinted = InventoryReservations.translate(refusal(true), "O-1");
    assertThat(hinted).isInstanceOfSatisfying(ResourceExhaustedException.class, e -> {
      assertThat(e.reason()).isEqualTo("OVERLOADED");
      assertThat(e.retryDelay()).contains(Duration.ofMillis(250));
      assertThat(e.metadata()).containsEntry("order_id", "O-1");
    });
    RuntimeException unhinted = InventoryReservations.translate(refusal(false), "O-1");
    assertThat(unhinted).isInstanceOfSatisfying(ResourceExhaustedException.class,
        e -> assertThat(e.retryDelay()).contains(InventoryReservations.DEFAULT_RETRY_DELAY));
  }

  private static Throwable answer(Code code, String reason, com.google.protobuf.Message... details) {
    com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder().setCode(code.getNumber()).setMessage("x")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason(reason).setDomain("warehouse.dev").build()));
    for (com.google.protobuf.Message detail : details) {
      status.addDetails(Any.pack(detail));
    }
    return StatusProto.toStatusRuntimeException(status.build());
  }

  @Test
  void aShortage_isReadFromItsTypedDetail_eachLinesNumbersInTheirPlace() {
    StockShortages detail = StockShortages.newBuilder()
        .addShortages(StockShortage.newBuilder().setProductId("P1").setWarehouseId("W1").setRequested(5).setAvailable(2))
        .addShortages(StockShortage.newBuilder().setProductId("P2").setWarehouseId("W3").setRequested(7).setAvailable(0))
        .build();
    RuntimeException out = InventoryReservations.translate(answer(Code.FAILED_PRECONDITION, "OUT_OF_STOCK", detail), "O-1");
    assertThat(out).isInstanceOfSatisfying(OutOfStockException.class, e -> assertThat(e.shortages()).containsExactly(
        new Shortage("P1", "W1", 5, 2), new Shortage("P2", "W3", 7, 0)));
  }

  @Test
  void aLineNotStockedAtItsWarehouse_isNotStocked_namingTheProductAndWarehouse_fromTheInventorysOwnError() {
    // The inventory's own refusal, through its own mapper to the wire: what the order-service receives.
    Throwable answer = GrpcErrors.toStatusException(InventoryService.inventoryNotFound("P-9", "W-2"));
    RuntimeException missing = InventoryReservations.translate(answer, "O-1");
    assertThat(missing).isInstanceOfSatisfying(NotStockedException.class, e -> {
      assertThat(e.reason()).isEqualTo("PRODUCT_INVENTORY_NOT_FOUND");
      assertThat(e.productId()).isEqualTo("P-9");
      assertThat(e.warehouseId()).isEqualTo("W-2");
    });
  }

  @Test
  void aHoldTooLargeForOneTransaction_staysAFailedPrecondition_withItsReason() {
    RuntimeException large = InventoryReservations.translate(answer(Code.FAILED_PRECONDITION, "RESERVATION_TOO_LARGE"), "O-1");
    assertThat(large).isInstanceOfSatisfying(dev.warehouse.runtime.error.FailedPreconditionException.class,
        e -> assertThat(e.reason()).isEqualTo(dev.warehouse.order.domain.StockReservations.TOO_LARGE));
  }

  @Test
  void contention_staysAborted_withARetryHint() {
    RuntimeException contended = InventoryReservations.translate(answer(Code.ABORTED, "CONCURRENT_UPDATE"), "O-1");
    assertThat(contended).isInstanceOfSatisfying(AbortedException.class, e -> {
      assertThat(e.reason()).isEqualTo("STOCK_CONTENDED");
      assertThat(e.retryDelay()).contains(InventoryReservations.DEFAULT_RETRY_DELAY);
    });
  }

  @Test
  void aRefusalOnlyAFaultOfOursExplains_isInternal_neverRetry() {
    for (Code code : new Code[] {Code.INVALID_ARGUMENT, Code.PERMISSION_DENIED, Code.UNAUTHENTICATED, Code.INTERNAL,
        Code.UNIMPLEMENTED}) {
      assertThat(InventoryReservations.translate(answer(code, "SOMETHING"), "O-1")).as(code.name())
          .isNotInstanceOf(ClientFacingException.class); // INTERNAL, with a generic message, at our mapper
    }
    assertThat(InventoryReservations.translate(io.grpc.Status.UNAVAILABLE.asRuntimeException(), "O-1"))
        .isInstanceOf(UnavailableException.class);
    assertThat(GrpcErrors.answeredByService(io.grpc.Status.UNAVAILABLE.asRuntimeException())).isFalse();
    assertThat(GrpcErrors.answeredByService(answer(Code.UNAVAILABLE, "DATABASE_UNAVAILABLE"))).isTrue();
  }
}
