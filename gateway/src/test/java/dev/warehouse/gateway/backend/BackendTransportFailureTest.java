package dev.warehouse.gateway.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.channels.ClosedChannelException;
import org.junit.jupiter.api.Test;

/**
 * A backend connection that closes under a call over TLS reaches the gateway as UNKNOWN "channel closed"
 * (LocalStackIT lost a read to it when an instance was killed mid-stream): it must count as UNAVAILABLE,
 * which the gateway retries on another instance, while an UNKNOWN a backend sent stays as it came.
 */
class BackendTransportFailureTest {

  @Test
  void aClosedChannel_underACall_isUnavailable() {
    // What grpc-java's Netty transport makes of it: UNKNOWN, with the closed channel as its cause.
    StatusRuntimeException closed = Status.UNKNOWN.withDescription("channel closed")
        .withCause(new ClosedChannelException()).asRuntimeException();

    Status seen = Status.fromThrowable(Backend.asTransportFailure(closed));

    assertThat(seen.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(seen.getDescription()).isEqualTo("the connection to the backend closed");
  }

  @Test
  void anUnknownFromTheBackend_andOtherStatuses_passUnchanged() {
    StatusRuntimeException fromBackend = Status.UNKNOWN.withDescription("boom").asRuntimeException();
    StatusRuntimeException notFound = Status.NOT_FOUND.asRuntimeException();

    assertThat(Backend.asTransportFailure(fromBackend)).isSameAs(fromBackend);
    assertThat(Backend.asTransportFailure(notFound)).isSameAs(notFound);
  }

  @Test
  void aServicesOwnUnavailable_isItsAnswer_notTheTransports_soTheGatewayNeitherRetriesNorCountsIt() {
    StatusRuntimeException answered = io.grpc.protobuf.StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
        .setCode(com.google.rpc.Code.UNAVAILABLE_VALUE).setMessage("the inventory-service could not hold the stock now")
        .addDetails(com.google.protobuf.Any.pack(com.google.rpc.ErrorInfo.newBuilder().setReason("INVENTORY_UNAVAILABLE")
            .setDomain("warehouse.dev").build()))
        .build());
    assertThat(dev.warehouse.runtime.grpc.GrpcErrors.answeredByService(answered)).isTrue();
    assertThat(dev.warehouse.runtime.grpc.GrpcErrors.answeredByService(Status.UNAVAILABLE.withDescription("io exception").asRuntimeException())).isFalse();
  }

  @Test
  void aCallCancelledPastTheCallersDeadline_isAnsweredDeadlineExceeded_neverCancelled() {
    StatusRuntimeException cancelled = Status.CANCELLED.withDescription("io.grpc.Context was cancelled").asRuntimeException();
    io.grpc.Deadline passed = io.grpc.Deadline.after(-1, java.util.concurrent.TimeUnit.MILLISECONDS);
    io.grpc.Deadline open = io.grpc.Deadline.after(1, java.util.concurrent.TimeUnit.HOURS);

    assertThat(Status.fromThrowable(dev.warehouse.runtime.grpc.GrpcErrors.pastDeadline(cancelled, passed)).getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(dev.warehouse.runtime.grpc.GrpcErrors.pastDeadline(cancelled, open)).as("the caller left before its deadline").isSameAs(cancelled);
  }
}
