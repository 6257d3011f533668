package dev.warehouse.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** Assertions on the statuses and {@code google.rpc} details a client receives. */
public final class Statuses {

  private Statuses() {}

  public static StatusRuntimeException failure(ThrowingCallable call) {
    StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call);
    assertThat(e).as("the call should fail with a status").isNotNull();
    return e;
  }

  public static void assertStatus(ThrowingCallable call, Status.Code code, String reason) {
    StatusRuntimeException e = failure(call);
    assertThat(e.getStatus().getCode()).isEqualTo(code);
    assertThat(detail(e, ErrorInfo.class).getReason()).isEqualTo(reason);
  }

  /** Asserts INVALID_ARGUMENT whose BadRequest names exactly these fields. */
  public static void assertInvalid(ThrowingCallable call, String... fields) {
    StatusRuntimeException e = failure(call);
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    List<String> named = detail(e, BadRequest.class).getFieldViolationsList().stream()
        .map(BadRequest.FieldViolation::getField).toList();
    assertThat(named).containsExactlyInAnyOrder(fields);
  }

  public static <T extends Message> T detail(StatusRuntimeException e, Class<T> type) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    assertThat(status).as("status details of " + e).isNotNull();
    return status.getDetailsList().stream().filter(any -> any.is(type)).findFirst().map(any -> {
      try {
        return any.unpack(type);
      } catch (InvalidProtocolBufferException x) {
        throw new AssertionError(x);
      }
    }).orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " in " + status));
  }

  /**
   * The delay a RESOURCE_EXHAUSTED refusal asks for ({@code google.rpc.RetryInfo}), in ms, or 100 ms when
   * it names none: what a careful client waits before asking again.
   */
  public static long retryDelayMs(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    return status == null ? 100 : status.getDetailsList().stream().filter(any -> any.is(RetryInfo.class)).findFirst()
        .map(any -> {
          try {
            com.google.protobuf.Duration delay = any.unpack(RetryInfo.class).getRetryDelay();
            return delay.getSeconds() * 1000 + delay.getNanos() / 1_000_000;
          } catch (InvalidProtocolBufferException x) {
            throw new AssertionError(x);
          }
        }).orElse(100L);
  }

  /** The {@code google.rpc.ErrorInfo} reason of a failure, or "" when it carries none. */
  public static String reason(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    return status == null ? "" : status.getDetailsList().stream().filter(any -> any.is(ErrorInfo.class)).findFirst()
        .map(any -> {
          try {
            return any.unpack(ErrorInfo.class).getReason();
          } catch (InvalidProtocolBufferException x) {
            throw new AssertionError(x);
          }
        }).orElse("");
  }
}
