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
import dev.warehouse.runtime.error.ServiceException;
import dev.warehouse.runtime.error.UnavailableException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The inventory-service's {@code ReservationService}, called directly (not through the gateway) over one
 * balanced channel that follows the inventory's instances ({@code INVENTORY_ADDRESSES}), secured as
 * {@code INVENTORY_TLS_MODE} says (mutual TLS with the order-service's own identity, in a deployment).
 *
 * <ul>
 *   <li><b>Deadlines.</b> A call made while serving a gRPC call carries that call's remaining deadline and
 *       its cancellation (grpc-java propagates the current {@link Context}); one made outside a call (the
 *       recovery) gets {@code INVENTORY_CALL_TIMEOUT_MS}, and so does a caller without a deadline.
 *   <li><b>Retries.</b> Only calls the contract declares idempotent (every reservation RPC is, by order id)
 *       are tried again, and only when the transport failed (UNAVAILABLE without the inventory's ErrorInfo:
 *       no instance reached, a connection reset), with jittered backoff, while the deadline leaves room.
 *       What the inventory answered itself was retried in its own layer: each failure is retried once.
 *   <li><b>Circuit breaker.</b> It hears only of the inventory's own failures (UNAVAILABLE, or the deadline
 *       passing on a call that had a fair budget). A caller whose deadline leaves less than the minimum
 *       budget is refused at once (DEADLINE_EXCEEDED, reason {@code DEADLINE_TOO_SHORT}) without asking
 *       the breaker, and a caller's cancellation before its deadline is neither failure nor success: so no
 *       caller's own short deadline can open the circuit for the others.
 *   <li><b>Metrics.</b> grpc-java's client metrics ({@code grpc_client_*}), the breaker's
 *       ({@code resilience4j_circuitbreaker_*{name="inventory-service"}}) and
 *       {@code inventory_client_retries_total{method}}.
 * </ul>
 */
public final class InventoryReservations implements StockReservations {

  /** Attempts of one call, first try included. */
  public static final int MAX_ATTEMPTS = 3;
  /** First backoff; doubled each retry, ±50 % jitter. */
  static final Duration INITIAL_BACKOFF = Duration.ofMillis(20);

  private final ManagedChannel channel;
  private final CircuitBreaker breaker;
  private final Duration defaultDeadline;
  private final long minBudgetNanos;
  private final ScheduledExecutorService scheduler;
  private final Set<String> retryable;
  private final MeterRegistry meters;

  /**
   * @param channel         balanced over the inventory's instances, with its client metrics
   * @param breaker         must ignore nothing: cancellations are released, not recorded
   * @param defaultDeadline for calls made without one ({@code INVENTORY_CALL_TIMEOUT_MS})
   * @param minBudget       the least time left with which a call is made at all
   * @param scheduler       where backoffs wait (never blocked on)
   * @param retryable       full method names the contract declares safe to repeat
   */
  public InventoryReservations(ManagedChannel channel, CircuitBreaker breaker, Duration defaultDeadline,
      Duration minBudget, ScheduledExecutorService scheduler, Set<String> retryable, MeterRegistry meters) {
    this.channel = channel;
    this.breaker = breaker;
    this.defaultDeadline = defaultDeadline;
    this.minBudgetNanos = minBudget.toNanos();
    this.scheduler = scheduler;
    this.retryable = retryable;
    this.meters = meters;
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
          if (cause instanceof ServiceException se && se.reason().equals("RESERVATION_NOT_FOUND")) {
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

  /**
   * One call, in the caller's context: refused at once when the deadline is too short or the circuit open;
   * otherwise tried, and tried again while it may be. Completes in the caller's context, failed with a
   * domain exception.
   */
  private <Q, R> CompletableFuture<R> call(MethodDescriptor<Q, R> method, Q request, String orderId) {
    Context context = Context.current();
    Deadline callers = context.getDeadline();
    if (callers != null && callers.timeRemaining(TimeUnit.NANOSECONDS) < minBudgetNanos) {
      return CompletableFuture.failedFuture(new DeadlineExceededException("DEADLINE_TOO_SHORT",
          "the call's deadline leaves too little time to reach the inventory-service", (Throwable) null));
    }
    if (!breaker.tryAcquirePermission()) {
      return CompletableFuture.failedFuture(new UnavailableException("INVENTORY_CIRCUIT_OPEN",
          "the inventory-service is unavailable; failing fast while its circuit is open"));
    }
    Deadline own = Deadline.after(defaultDeadline.toNanos(), TimeUnit.NANOSECONDS);
    Deadline budget = callers == null ? own : callers;
    CompletableFuture<R> result = new CompletableFuture<>();
    int attempts = retryable.contains(method.getFullMethodName()) ? MAX_ATTEMPTS : 1;
    attempt(context, method, request, budget, attempts, 1, System.nanoTime(), result, orderId);
    return result;
  }

  private <Q, R> void attempt(Context context, MethodDescriptor<Q, R> method, Q request, Deadline budget, int attempts,
      int number, long started, CompletableFuture<R> result, String orderId) {
    // In the caller's context: the call inherits its deadline and cancellation (and ours, when it had none).
    // Wait for ready: an inventory instance restarting (its connection closed, the channel reconnecting)
    // delays a call within its deadline instead of failing it; one that stays down ends at the deadline,
    // which the breaker counts.
    context.run(() -> ClientCalls.asyncUnaryCall(channel.newCall(method,
            CallOptions.DEFAULT.withDeadline(budget).withWaitForReady()),
        request, new StreamObserver<R>() {
          private R value;

          @Override
          public void onNext(R received) {
            value = received;
          }

          @Override
          public void onError(Throwable received) {
            Throwable failure = GrpcErrors.pastDeadline(received, budget);
            Status.Code code = Status.fromThrowable(failure).getCode();
            boolean transport = !GrpcErrors.answeredByService(failure);
            if (code == Status.Code.UNAVAILABLE && transport) {
              // A lost connection: reconnect now, not after the channel's growing backoff (as the gateway does).
              channel.resetConnectBackoff();
            }
            long backoff = backoffNanos(number);
            // Only the transport's failures are tried again here: whatever the inventory answered itself (ABORTED
            // once its own rounds on a contended stock record ran out, UNAVAILABLE once its data layer's retries
            // did) was retried in its own layer already.
            if (code == Status.Code.UNAVAILABLE && transport && number < attempts && !context.isCancelled()
                && budget.timeRemaining(TimeUnit.NANOSECONDS) >= backoff + minBudgetNanos) {
              Counter.builder("inventory.client.retries").description("calls to the inventory-service tried again")
                  .tag("method", method.getBareMethodName()).register(meters).increment();
              scheduler.schedule(() -> attempt(context, method, request, budget, attempts, number + 1, started, result,
                  orderId), backoff, TimeUnit.NANOSECONDS);
              return;
            }
            long elapsed = System.nanoTime() - started;
            if (context.isCancelled() && !budget.isExpired()) {
              breaker.releasePermission(); // the caller went away: nothing learnt about the inventory
            } else if (code == Status.Code.UNAVAILABLE && transport || code == Status.Code.DEADLINE_EXCEEDED) {
              // Unreachable, or silent past the deadline: the inventory's own failures. Its answers (contention,
              // refusals, its database's failures) do not count against it.
              breaker.onError(elapsed, TimeUnit.NANOSECONDS, failure);
            } else {
              breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
            }
            RuntimeException translated = translate(failure, orderId);
            context.run(() -> result.completeExceptionally(translated));
          }

          @Override
          public void onCompleted() {
            breaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
            R answer = value;
            context.run(() -> result.complete(answer));
          }
        }));
  }

  private static long backoffNanos(int attemptsMade) {
    double base = INITIAL_BACKOFF.toNanos() * Math.pow(2, attemptsMade - 1);
    return (long) (base * (0.5 + ThreadLocalRandom.current().nextDouble()));
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
        return new UnavailableException("INVENTORY_UNAVAILABLE",
            "the inventory-service could not hold or move the order's stock now; retry with the same request_id", failure);
      case DEADLINE_EXCEEDED:
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
