package dev.warehouse.order.stock;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dev.warehouse.inventory.v1.CommitReservationRequest;
import dev.warehouse.inventory.v1.ConfirmReservationRequest;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.ReleaseCause;
import dev.warehouse.inventory.v1.ReleaseReservationRequest;
import dev.warehouse.inventory.v1.Reservation;
import dev.warehouse.inventory.v1.ReservationLine;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.inventory.v1.ReserveStockRequest;
import dev.warehouse.inventory.v1.StockShortages;
import dev.warehouse.order.domain.NotStockedException;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OutOfStockException;
import dev.warehouse.order.domain.Shortage;
import dev.warehouse.order.domain.StockReservations;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.CancelledException;
import dev.warehouse.runtime.error.DeadlineExceededException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.ResourceExhaustedException;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.error.UnavailableException;
import dev.warehouse.runtime.peer.PeerCalls;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The inventory-service's {@code ReservationService}, called directly (not through the gateway) over one
 * balanced channel that follows the inventory's instances ({@code INVENTORY_ADDRESSES}), secured as
 * {@code INVENTORY_TLS_MODE} says (mutual TLS with the order-service's own identity, in a deployment).
 * The calls are made by {@link PeerCalls}, as the gateway's are: the caller's deadline ({@code
 * INVENTORY_CALL_TIMEOUT_MS} for the recovery's calls and callers without one), one retry layer for the
 * transport's failures, and the circuit breaker ({@code resilience4j_circuitbreaker_*{name="inventory-service"}}).
 * Here the inventory's answers become the order domain's exceptions, each keeping its meaning.
 */
public final class InventoryReservations implements StockReservations {

  private final ManagedChannel channel;
  private final PeerCalls calls;

  /**
   * @param channel balanced over the inventory's instances, with its client metrics
   * @param calls   the client layer of the calls: budget, retries and breaker
   */
  public InventoryReservations(ManagedChannel channel, PeerCalls calls) {
    this.channel = channel;
    this.calls = calls;
  }

  @Override
  public CompletableFuture<State> reserve(String orderId, List<OrderLine> lines, Duration hold) {
    ReserveStockRequest.Builder request = ReserveStockRequest.newBuilder().setOrderId(orderId)
        .setHoldDuration(com.google.protobuf.Duration.newBuilder().setSeconds(hold.getSeconds()).setNanos(hold.getNano()));
    lines.forEach(l -> request.addLines(ReservationLine.newBuilder()
        .setProductId(l.productId()).setWarehouseId(l.warehouseId()).setQuantity(l.quantity())));
    return call(ReservationServiceGrpc.getReserveStockMethod(), request.build(), orderId).thenApply(InventoryReservations::state);
  }

  @Override
  public CompletableFuture<State> confirm(String orderId) {
    return call(ReservationServiceGrpc.getConfirmReservationMethod(),
        ConfirmReservationRequest.newBuilder().setOrderId(orderId).build(), orderId).thenApply(InventoryReservations::state);
  }

  @Override
  public CompletableFuture<State> commit(String orderId) {
    return call(ReservationServiceGrpc.getCommitReservationMethod(),
        CommitReservationRequest.newBuilder().setOrderId(orderId).build(), orderId).thenApply(InventoryReservations::state);
  }

  @Override
  public CompletableFuture<State> release(String orderId, Cause cause) {
    ReleaseCause why = cause == Cause.ORDER_CANCELLED ? ReleaseCause.RELEASE_CAUSE_ORDER_CANCELLED
        : ReleaseCause.RELEASE_CAUSE_ORDER_REJECTED;
    return call(ReservationServiceGrpc.getReleaseReservationMethod(),
        ReleaseReservationRequest.newBuilder().setOrderId(orderId).setCause(why).build(), orderId)
        .thenApply(InventoryReservations::state);
  }

  @Override
  public CompletableFuture<Optional<State>> find(String orderId) {
    return call(ReservationServiceGrpc.getGetReservationMethod(),
        GetReservationRequest.newBuilder().setOrderId(orderId).setConsistentRead(true).build(), orderId)
        .thenApply(r -> Optional.of(state(r)))
        .exceptionally(failure -> {
          Throwable cause = dev.warehouse.runtime.error.Failures.cause(failure);
          if (cause instanceof ClientFacingException se && se.reason().equals("RESERVATION_NOT_FOUND")) {
            return Optional.empty();
          }
          throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
        });
  }

  private static State state(Reservation reservation) {
    return switch (reservation.getState()) {
      case RESERVATION_STATE_HELD -> State.HELD;
      case RESERVATION_STATE_CONFIRMED -> State.CONFIRMED;
      case RESERVATION_STATE_COMMITTED -> State.COMMITTED;
      case RESERVATION_STATE_RELEASED -> reservation.getReleaseCause() == ReleaseCause.RELEASE_CAUSE_BEFORE_RESERVE
          ? State.TOMBSTONE : State.RELEASED;
      case RESERVATION_STATE_UNSPECIFIED, UNRECOGNIZED ->
          throw new UnavailableException("INVENTORY_UNEXPECTED_ANSWER", "the inventory answered a reservation in no known state");
    };
  }

  /** One call, completing in the caller's context, failed with a domain exception. */
  private <Q, R> CompletableFuture<R> call(MethodDescriptor<Q, R> method, Q request, String orderId) {
    CompletableFuture<R> result = new CompletableFuture<>();
    calls.call(() -> channel, method, request).whenComplete((answer, failure) -> {
      if (failure == null) {
        result.complete(answer);
      } else {
        result.completeExceptionally(translate(failure, orderId));
      }
    });
    return result;
  }

  /**
   * The inventory's answer, in the order domain's terms, each keeping its meaning: contention stays ABORTED
   * (retry, with RetryInfo), unreachability UNAVAILABLE; what only a fault of ours or of the deployment
   * explains (the inventory refusing our request as malformed, or our identity) is INTERNAL, logged here
   * with the inventory's words, never "retry". Its own words stay in our log.
   */
  public static RuntimeException translate(Throwable failure, String orderId) {
    Status status = Status.fromThrowable(failure);
    com.google.rpc.Status details = StatusProto.fromThrowable(failure);
    String reason = "";
    List<Shortage> shortages = new ArrayList<>();
    Duration retryDelay = DEFAULT_RETRY_DELAY;
    if (details != null) {
      for (Any any : details.getDetailsList()) {
        try {
          if (any.is(ErrorInfo.class)) {
            reason = any.unpack(ErrorInfo.class).getReason();
          } else if (any.is(StockShortages.class)) {
            any.unpack(StockShortages.class).getShortagesList().forEach(s -> shortages.add(
                new Shortage(s.getProductId(), s.getWarehouseId(), s.getRequested(), s.getAvailable())));
          } else if (any.is(RetryInfo.class)) {
            com.google.protobuf.Duration delay = any.unpack(RetryInfo.class).getRetryDelay();
            retryDelay = Duration.ofSeconds(delay.getSeconds(), delay.getNanos());
          }
        } catch (InvalidProtocolBufferException unreadable) {
          // a detail we cannot read says nothing more
        }
      }
    }
    switch (status.getCode()) {
      case FAILED_PRECONDITION:
        if (reason.equals(OutOfStockException.REASON)) {
          return new OutOfStockException(orderId, shortages);
        }
        if (reason.equals(TOO_LARGE)) {
          return new FailedPreconditionException(reason, "the order's lines need more stock items than one transaction takes",
              Map.of("order_id", orderId));
        }
        if (reason.equals(RELEASED) || reason.equals(COMMITTED) || reason.equals(CONFIRMED)
            || reason.equals("RESERVATION_NOT_CONFIRMED")) {
          return new FailedPreconditionException(reason, "the order's reservation is " + reason.substring(12).toLowerCase(),
              Map.of("order_id", orderId));
        }
        break;
      case NOT_FOUND:
        if (reason.equals("PRODUCT_INVENTORY_NOT_FOUND") && details != null) {
          Map<String, String> meta = errorInfo(details);
          return new NotStockedException(meta.getOrDefault("product_id", "?"), meta.getOrDefault("warehouse_id", "?"));
        }
        if (reason.equals("RESERVATION_NOT_FOUND")) {
          return new dev.warehouse.runtime.error.NotFoundException(reason, "the order has no reservation",
              Map.of("order_id", orderId));
        }
        break;
      case ABORTED:
        // The inventory's rounds on a contended stock record ran out: nothing was held or moved.
        return new AbortedException("STOCK_CONTENDED",
            "the stock of the order's lines is changing too often to hold it now; retry with the same request_id",
            Map.of("order_id", orderId), Optional.of(retryDelay));
      case RESOURCE_EXHAUSTED:
        // The inventory refused before holding anything (its concurrency limit, or its store throttling):
        // the order stays PENDING, and the same request_id asks again.
        return new ResourceExhaustedException(reason.isEmpty() ? "OVERLOADED" : reason,
            "the inventory-service is busy and held none of the order's stock; retry with the same request_id",
            Map.of("order_id", orderId), retryDelay);
      case UNAVAILABLE:
        if (reason.equals("BACKEND_CIRCUIT_OPEN")) {
          return new UnavailableException("INVENTORY_CIRCUIT_OPEN",
              "the inventory-service is unavailable; failing fast while its circuit is open");
        }
        return new UnavailableException("INVENTORY_UNAVAILABLE",
            "the inventory-service could not hold or move the order's stock now; retry with the same request_id", failure);
      case DEADLINE_EXCEEDED:
        if (reason.equals("DEADLINE_TOO_SHORT")) {
          return new DeadlineExceededException(reason,
              "the call's deadline leaves too little time to reach the inventory-service", (Throwable) null);
        }
        return new DeadlineExceededException("DEADLINE_EXCEEDED", "the inventory-service did not answer in time", failure);
      case CANCELLED:
        return new CancelledException("CANCELLED", "the call was cancelled");
      default:
        break;
    }
    // INVALID_ARGUMENT, PERMISSION_DENIED, UNAUTHENTICATED, INTERNAL, an unknown reason ...: a fault of ours or
    // of the deployment, which no retry mends. INTERNAL to our caller, with the inventory's words in our log only.
    return new IllegalStateException("the inventory-service refused a call for order " + orderId + ": " + status.getCode()
        + " " + reason + " " + status.getDescription());
  }

  /** Used when the inventory's refusal names no delay. */
  static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(100);

  private static Map<String, String> errorInfo(com.google.rpc.Status details) {
    for (Any any : details.getDetailsList()) {
      if (any.is(ErrorInfo.class)) {
        try {
          return any.unpack(ErrorInfo.class).getMetadataMap();
        } catch (InvalidProtocolBufferException e) {
          return Map.of();
        }
      }
    }
    return Map.of();
  }
}
