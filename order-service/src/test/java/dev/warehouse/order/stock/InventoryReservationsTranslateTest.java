package dev.warehouse.order.stock;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The inventory's refusals under load, as the order domain hears them: retry hint kept, or the default. */
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
}
