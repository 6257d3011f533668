package dev.warehouse.runtime.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.PreconditionFailure;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.FieldViolation;
import dev.warehouse.runtime.error.InvalidArgumentException;
import dev.warehouse.runtime.error.NotFoundException;
import dev.warehouse.runtime.error.PermissionDeniedException;
import dev.warehouse.runtime.error.PreconditionViolation;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.error.UnauthenticatedException;
import dev.warehouse.runtime.error.UnavailableException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class GrpcErrorsTest {

  @Test
  void eachDomainErrorHasItsCodeAndReason() {
    assertMapped(new NotFoundException("SERIAL_ITEM_NOT_FOUND", "m"), Status.Code.NOT_FOUND, "SERIAL_ITEM_NOT_FOUND");
    assertMapped(new AlreadyExistsException("ORDER_EXISTS", "m"), Status.Code.ALREADY_EXISTS, "ORDER_EXISTS");
    assertMapped(new FailedPreconditionException("INSUFFICIENT_STOCK", "m", Map.of("available", "3")),
        Status.Code.FAILED_PRECONDITION, "INSUFFICIENT_STOCK");
    assertMapped(new AbortedException("VERSION_MISMATCH", "m"), Status.Code.ABORTED, "VERSION_MISMATCH");
    assertMapped(new UnavailableException("DATABASE_UNAVAILABLE", "m"), Status.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE");
    assertMapped(new ResourceExhaustedException("DATABASE_THROTTLED", "m", null), Status.Code.RESOURCE_EXHAUSTED, "DATABASE_THROTTLED");
    assertMapped(new UnauthenticatedException("TOKEN_EXPIRED", "m"), Status.Code.UNAUTHENTICATED, "TOKEN_EXPIRED");
    assertMapped(new PermissionDeniedException("METHOD_NOT_ALLOWED", "m", Map.of("method", "a.B/C")),
        Status.Code.PERMISSION_DENIED, "METHOD_NOT_ALLOWED");
  }

  @Test
  void invalidArgument_carriesBadRequestWithEveryField_evenWhenWrapped() {
    StatusRuntimeException e = GrpcErrors.toStatusException(new CompletionException(new InvalidArgumentException(List.of(
        new FieldViolation("product_id", "is required"), new FieldViolation("page_size", "must not be negative")))));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    BadRequest badRequest = detail(e, BadRequest.class);
    assertThat(badRequest.getFieldViolationsList()).extracting(BadRequest.FieldViolation::getField)
        .containsExactly("product_id", "page_size");
  }

  @Test
  void failedPrecondition_withViolations_carriesPreconditionFailure_andErrorInfo() {
    StatusRuntimeException e = GrpcErrors.toStatusException(new CompletionException(new FailedPreconditionException(
        "OUT_OF_STOCK", "m", Map.of("short_lines", "2"), List.of(
            new PreconditionViolation("OUT_OF_STOCK", "products/p1/warehouses/w1", "requested 3, available 1"),
            new PreconditionViolation("OUT_OF_STOCK", "products/p2/warehouses/w1", "requested 2, available 0")))));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(detail(e, ErrorInfo.class).getMetadataMap()).containsEntry("short_lines", "2");
    PreconditionFailure failure = detail(e, PreconditionFailure.class);
    assertThat(failure.getViolationsList()).extracting(PreconditionFailure.Violation::getSubject)
        .containsExactly("products/p1/warehouses/w1", "products/p2/warehouses/w1");
    assertThat(failure.getViolations(0).getType()).isEqualTo("OUT_OF_STOCK");
    assertThat(failure.getViolations(0).getDescription()).isEqualTo("requested 3, available 1");
  }

  @Test
  void failedPrecondition_withoutViolations_hasNoPreconditionFailure() {
    StatusRuntimeException e = GrpcErrors.toStatusException(new FailedPreconditionException("STOCK_RESERVED", "m"));
    assertThat(StatusProto.fromThrowable(e).getDetailsList()).noneMatch(any -> any.is(PreconditionFailure.class));
  }

  @Test
  void unexpectedFailure_isInternal_withoutItsMessage() {
    StatusRuntimeException e = GrpcErrors.toStatusException(new IllegalStateException("secret table arn:aws:..."));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(e.getStatus().getDescription()).isEqualTo("internal error");
    assertThat(StatusProto.fromThrowable(e).toString()).doesNotContain("secret");
  }

  private static void assertMapped(RuntimeException failure, Status.Code code, String reason) {
    StatusRuntimeException e = GrpcErrors.toStatusException(failure);
    assertThat(e.getStatus().getCode()).isEqualTo(code);
    ErrorInfo info = detail(e, ErrorInfo.class);
    assertThat(info.getReason()).isEqualTo(reason);
    assertThat(info.getDomain()).isEqualTo(GrpcErrors.ERROR_DOMAIN);
  }

  private static <T extends com.google.protobuf.Message> T detail(StatusRuntimeException e, Class<T> type) {
    return StatusProto.fromThrowable(e).getDetailsList().stream()
        .filter(any -> any.is(type))
        .map(any -> {
          try {
            return any.unpack(type);
          } catch (com.google.protobuf.InvalidProtocolBufferException x) {
            throw new AssertionError(x);
          }
        })
        .findFirst().orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " in " + e));
  }

  @Test
  void aPreparedFailure_answersWhatTheMapperWould_withTrailersOfItsOwnEachTime_andNoStackTrace() {
    ResourceExhaustedException overloaded = new ResourceExhaustedException("OVERLOADED", "busy; retry after 100 ms",
        Map.of("route", "GetOrder", "retry_after_ms", "100"), java.time.Duration.ofMillis(100));
    GrpcErrors.Prepared prepared = GrpcErrors.prepare(overloaded);
    StatusRuntimeException first = prepared.exception();
    StatusRuntimeException second = prepared.exception();

    StatusRuntimeException mapped = GrpcErrors.toStatusException(overloaded);
    assertThat(first.getStatus().getCode()).isEqualTo(mapped.getStatus().getCode());
    assertThat(first.getStatus().getDescription()).isEqualTo(mapped.getStatus().getDescription());
    assertThat(io.grpc.protobuf.StatusProto.fromThrowable(first)).isEqualTo(io.grpc.protobuf.StatusProto.fromThrowable(mapped));
    assertThat(detail(first, com.google.rpc.RetryInfo.class).getRetryDelay().getNanos()).isEqualTo(100_000_000);
    assertThat(first.getTrailers()).isNotSameAs(second.getTrailers());
    assertThat(first.getStackTrace()).isEmpty();
  }
}
