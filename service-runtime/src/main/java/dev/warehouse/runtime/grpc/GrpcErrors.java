package dev.warehouse.runtime.grpc;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import com.google.rpc.PreconditionFailure;
import com.google.rpc.RetryInfo;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.CancelledException;
import dev.warehouse.runtime.error.DeadlineExceededException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.FieldViolation;
import dev.warehouse.runtime.error.InvalidArgumentException;
import dev.warehouse.runtime.error.NotFoundException;
import dev.warehouse.runtime.error.PermissionDeniedException;
import dev.warehouse.runtime.error.PreconditionViolation;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.error.UnauthenticatedException;
import dev.warehouse.runtime.error.UnavailableException;
import dev.warehouse.runtime.log.Events;
import io.grpc.ServerCall;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where failures become gRPC statuses (AIP-193): each {@link ClientFacingException} keeps
 * its code, client-safe message and {@code google.rpc.ErrorInfo}; invalid arguments add a
 * {@code google.rpc.BadRequest}, failed preconditions that name theirs a {@code google.rpc.PreconditionFailure}. Anything else is INTERNAL with a generic message and is logged with
 * its cause, so no stack trace or SDK text reaches a client.
 */
public final class GrpcErrors {

  /**
   * Ends a server call with {@code refusal}, worded as {@link #toStatusException} words it, before any of
   * its messages is read: for interceptors that turn a call away (authentication, authorization).
   */
  public static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, ClientFacingException refusal) {
    StatusRuntimeException status = toStatusException(refusal);
    call.close(status.getStatus(), status.getTrailers());
    return new ServerCall.Listener<>() {};
  }

  /** The {@code ErrorInfo.domain} of every error this system raises. */
  public static final String ERROR_DOMAIN = "warehouse.dev";

  private static final Logger log = LoggerFactory.getLogger(GrpcErrors.class);

  private GrpcErrors() {}

  public static StatusRuntimeException toStatusException(Throwable failure) {
    Throwable cause = Failures.cause(failure);
    if (cause instanceof StatusRuntimeException sre) {
      return sre;
    }
    if (cause instanceof StatusException se) {
      return new StatusRuntimeException(se.getStatus(), se.getTrailers());
    }
    if (cause instanceof ClientFacingException se) {
      if (se.getCause() != null) {
        // The caller gets the status; the operator gets the cause behind it.
        Events.warn(log, "call_failed").addKeyValue("reason", se.reason()).addKeyValue("detail", se.getMessage())
            .setCause(se.getCause()).log();
      }
      return StatusProto.toStatusRuntimeException(toStatusProto(se));
    }
    Events.error(log, "call_failed").addKeyValue("reason", "INTERNAL").setCause(cause).log();
    return StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
        .setCode(Code.INTERNAL_VALUE)
        .setMessage("internal error")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("INTERNAL").setDomain(ERROR_DOMAIN).build()))
        .build());
  }

  /**
   * Whether a failure of a call to one of our services is that service's own answer (it carries our
   * {@code google.rpc.ErrorInfo}), not the transport's (no instance reached, a reset, a proxy's refusal).
   * A caller retries only the transport's failures: what a service answered itself was retried in its layer.
   */
  public static boolean answeredByService(Throwable failure) {
    com.google.rpc.Status status = StatusProto.fromThrowable(failure);
    return status != null && status.getDetailsList().stream().anyMatch(detail -> detail.is(ErrorInfo.class));
  }

  /** The delay a refusal's {@code google.rpc.RetryInfo} asks a client to wait, if it carries a readable one. */
  public static java.util.Optional<java.time.Duration> retryDelay(Throwable failure) {
    com.google.rpc.Status status = StatusProto.fromThrowable(failure);
    if (status == null) {
      return java.util.Optional.empty();
    }
    for (Any detail : status.getDetailsList()) {
      if (detail.is(RetryInfo.class)) {
        try {
          com.google.protobuf.Duration delay = detail.unpack(RetryInfo.class).getRetryDelay();
          return java.util.Optional.of(java.time.Duration.ofSeconds(delay.getSeconds(), delay.getNanos()));
        } catch (com.google.protobuf.InvalidProtocolBufferException malformed) {
          return java.util.Optional.empty();
        }
      }
    }
    return java.util.Optional.empty();
  }

  /** The {@code google.rpc.ErrorInfo} an answer carries in its trailers, if any (its reason names why). */
  public static java.util.Optional<ErrorInfo> errorInfo(io.grpc.Status status, io.grpc.Metadata trailers) {
    if (status.isOk() || trailers == null) {
      return java.util.Optional.empty();
    }
    com.google.rpc.Status details = StatusProto.fromStatusAndTrailers(status, trailers);
    for (Any any : details.getDetailsList()) {
      if (any.is(ErrorInfo.class)) {
        try {
          return java.util.Optional.of(any.unpack(ErrorInfo.class));
        } catch (com.google.protobuf.InvalidProtocolBufferException unreadable) {
          return java.util.Optional.empty();
        }
      }
    }
    return java.util.Optional.empty();
  }

  /**
   * A call's failure as its caller should hear it: the caller's deadline passing cancels the call's context,
   * and the call below can end CANCELLED before its own deadline fires; past {@code deadline}, that is
   * DEADLINE_EXCEEDED (the code a client expects, and retries), never CANCELLED.
   */
  public static Throwable pastDeadline(Throwable failure, io.grpc.Deadline deadline) {
    if (io.grpc.Status.fromThrowable(failure).getCode() == io.grpc.Status.Code.CANCELLED && deadline.isExpired()) {
      return io.grpc.Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed before it was answered")
          .asRuntimeException();
    }
    return failure;
  }

  /**
   * {@code failure} built once for answering many times: a refusal under overload, answered thousands of times
   * a second when it matters, costs one status and one copy of its details' bytes per answer instead of a
   * {@code google.rpc.Status} built, packed and serialized each time (6 % of the gateway's CPU samples in a
   * closed loop the gateway's limit refused 40 % of).
   */
  public static Prepared prepare(ClientFacingException failure) {
    com.google.rpc.Status proto = toStatusProto(failure);
    return new Prepared(io.grpc.Status.fromCodeValue(proto.getCode()).withDescription(proto.getMessage()),
        proto.toByteArray());
  }

  /** A failure's status and serialized {@code google.rpc.Status}, ready to answer (see {@link #prepare}). */
  public static final class Prepared {
    /** The trailer {@link StatusProto} writes and reads: the details as they go on the wire. */
    private static final io.grpc.Metadata.Key<byte[]> DETAILS =
        io.grpc.Metadata.Key.of("grpc-status-details-bin", io.grpc.Metadata.BINARY_BYTE_MARSHALLER);

    private final io.grpc.Status status;
    private final byte[] details;

    private Prepared(io.grpc.Status status, byte[] details) {
      this.status = status;
      this.details = details;
    }

    /** A new exception for one answer: its own trailers (a call's transport owns them), sharing the bytes. */
    public StatusRuntimeException exception() {
      io.grpc.Metadata trailers = new io.grpc.Metadata();
      trailers.put(DETAILS, details);
      return new Answer(status, trailers);
    }
  }

  /** An answer, not a fault: the stack of where it was made says nothing, and capturing it costs every refusal. */
  private static final class Answer extends StatusRuntimeException {
    private static final long serialVersionUID = 1L;

    Answer(io.grpc.Status status, io.grpc.Metadata trailers) {
      super(status, trailers);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  static com.google.rpc.Status toStatusProto(ClientFacingException e) {
    com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder()
        .setCode(codeOf(e).getNumber())
        .setMessage(e.getMessage())
        .addDetails(Any.pack(ErrorInfo.newBuilder()
            .setReason(e.reason())
            .setDomain(ERROR_DOMAIN)
            .putAllMetadata(e.metadata())
            .build()));
    if (e instanceof InvalidArgumentException invalid) {
      BadRequest.Builder badRequest = BadRequest.newBuilder();
      for (FieldViolation v : invalid.violations()) {
        badRequest.addFieldViolationsBuilder().setField(v.field()).setDescription(v.description());
      }
      status.addDetails(Any.pack(badRequest.build()));
    }
    java.util.Optional<java.time.Duration> retryDelay = e instanceof ResourceExhaustedException exhausted
        ? exhausted.retryDelay() : e instanceof AbortedException aborted ? aborted.retryDelay() : java.util.Optional.empty();
    if (retryDelay.isPresent()) {
      java.time.Duration delay = retryDelay.get();
      status.addDetails(Any.pack(RetryInfo.newBuilder().setRetryDelay(com.google.protobuf.Duration.newBuilder()
          .setSeconds(delay.getSeconds()).setNanos(delay.getNano())).build()));
    }
    if (e instanceof ResourceExhaustedException exhausted && exhausted.quota().isPresent()) {
      status.addDetails(Any.pack(com.google.rpc.QuotaFailure.newBuilder().addViolations(
          com.google.rpc.QuotaFailure.Violation.newBuilder().setSubject(exhausted.quota().get().subject())
              .setDescription(exhausted.quota().get().description())).build()));
    }
    if (e instanceof FailedPreconditionException failed && !failed.violations().isEmpty()) {
      PreconditionFailure.Builder failure = PreconditionFailure.newBuilder();
      for (PreconditionViolation v : failed.violations()) {
        failure.addViolationsBuilder().setType(v.type()).setSubject(v.subject()).setDescription(v.description());
      }
      status.addDetails(Any.pack(failure.build()));
    }
    if (e instanceof FailedPreconditionException failed) {
      failed.details().forEach(detail -> status.addDetails(Any.pack(detail)));
    }
    return status.build();
  }

  private static Code codeOf(ClientFacingException e) {
    if (e instanceof InvalidArgumentException) {
      return Code.INVALID_ARGUMENT;
    } else if (e instanceof NotFoundException) {
      return Code.NOT_FOUND;
    } else if (e instanceof AlreadyExistsException) {
      return Code.ALREADY_EXISTS;
    } else if (e instanceof FailedPreconditionException) {
      return Code.FAILED_PRECONDITION;
    } else if (e instanceof AbortedException) {
      return Code.ABORTED;
    } else if (e instanceof UnavailableException) {
      return Code.UNAVAILABLE;
    } else if (e instanceof ResourceExhaustedException) {
      return Code.RESOURCE_EXHAUSTED;
    } else if (e instanceof DeadlineExceededException) {
      return Code.DEADLINE_EXCEEDED;
    } else if (e instanceof CancelledException) {
      return Code.CANCELLED;
    } else if (e instanceof UnauthenticatedException) {
      return Code.UNAUTHENTICATED;
    } else if (e instanceof PermissionDeniedException) {
      return Code.PERMISSION_DENIED;
    }
    return Code.INTERNAL;
  }
}
