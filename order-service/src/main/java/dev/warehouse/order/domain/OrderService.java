package dev.warehouse.order.domain;

import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.NotFoundException;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.runtime.scope.CallerScope;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The order use cases, in plain Java. Inputs arrive validated.
 *
 * <p>An order buys stock, held in the inventory-service ({@link StockReservations}), whose reservation is
 * the one truth of whether its stock is held. Placing writes the order PENDING, owing the step
 * {@link StockStep#PLACE}; holds its lines; confirms the hold; and only then writes it PLACED. A PENDING
 * order's fate is decided once, at its reservation: lines that cannot be held (or a hold given up on) are
 * fenced there first (a HELD reservation released, or a tombstone left so that a late hold fails), and
 * only then is the order written REJECTED; a fence that finds the reservation CONFIRMED places the order
 * instead, since another path confirmed it. So a PLACED order always has its stock held, a REJECTED one
 * holds none, and no rejecting path undoes a confirm. Cancelling and shipping write the new status with
 * the step it owes (RELEASE, COMMIT), make the step, and mark it done; a later move carries a step still
 * owed (DELIVERED keeps SHIPPED's COMMIT). Whatever a crash or a lost answer interrupts, the order still owes its step,
 * and {@link #recover} (the recovery loop's) finishes it; every step is idempotent by order id, so the
 * inventory moves an order's stock exactly once however often it is repeated.
 */
public final class OrderService {

  /** Read-modify-write rounds of a status change without expected_version, before giving up with ABORTED. */
  public static final int STATUS_CHANGE_ROUNDS = 3;

  private static final Logger log = LoggerFactory.getLogger(OrderService.class);

  private final OrderRepository repository;
  private final StockReservations stock;
  private final Clock clock;
  private final Delay delay;
  private final SagaTimings timings;
  private final Counter overruled;
  private final MeterRegistry meters;

  /**
   * @param delay  where a status change waits out its step budget (the process's timer)
   * @param meters where the saga's integrity signals are counted: {@code order_rejections_overruled_total} (a
   *               rejecting path found the order placed by another, and placed it too) and
   *               {@code order_stock_integrity_violations_total{kind}} (a step the inventory can never make:
   *               a shipped order's reservation was released, or a cancelled one's committed)
   */
  public OrderService(OrderRepository repository, StockReservations stock, Clock clock, Delay delay, SagaTimings timings,
      MeterRegistry meters) {
    this.repository = repository;
    this.stock = stock;
    this.clock = clock;
    this.delay = delay;
    this.timings = timings;
    this.meters = meters;
    this.overruled = Counter.builder("order.rejections.overruled")
        .description("rejecting paths whose fence found the order's reservation confirmed: placed, not rejected")
        .register(meters);
    for (String kind : List.of(COMMIT_OF_RELEASED, RELEASE_OF_COMMITTED)) {
      integrityViolations(kind); // at 0 from the start, so an increase is seen from the first one
    }
  }

  /** A shipped order's COMMIT refused: its reservation was released, its units sold and given back. */
  public static final String COMMIT_OF_RELEASED = "commit_of_released_reservation";
  /** A cancelled order's RELEASE refused: its units already left the warehouse. */
  public static final String RELEASE_OF_COMMITTED = "release_of_committed_reservation";

  private Counter integrityViolations(String kind) {
    return Counter.builder("order.stock.integrity.violations")
        .description("stock steps the inventory refused for good: a broken promise, to repair by hand")
        .tag("kind", kind).register(meters);
  }

  /**
   * Places an order: PLACED with its stock held, or failed with what kept it from being placed. A
   * replay of the same request answers the same outcome, finishing the placing first if it is PENDING.
   */
  public CompletableFuture<Order> placeOrder(PlaceOrderCommand command) {
    Instant now = clock.instant();
    Order order = new Order(
        command.orderId().orElseGet(() -> "O-" + UUID.randomUUID()),
        command.customerId(),
        command.orderDate().orElseGet(() -> LocalDate.ofInstant(now, ZoneOffset.UTC)),
        OrderStatus.PENDING,
        command.total(),
        0, // placing it is its first change: a PLACED (or REJECTED) order is at version 1
        now,
        now,
        command.lines(),
        command.lines().size(),
        Optional.empty(),
        Optional.of(new PendingStep(StockStep.PLACE, now.plus(timings.stepGrace()))));
    return repository.create(order, command, now).thenCompose(this::answerPlacing);
  }

  /** What PlaceOrder answers for {@code order} as stored: a PENDING one is placed first. */
  private CompletableFuture<Order> answerPlacing(Order order) {
    return switch (order.status()) {
      case PENDING -> hold(order).thenCompose(this::answerPlacing);
      case REJECTED -> CompletableFuture.failedFuture(rejectionError(order));
      default -> CompletableFuture.completedFuture(order);
    };
  }

  /** Holds a PENDING order's lines, then places it; rejects it when they cannot be held. */
  private CompletableFuture<Order> hold(Order pending) {
    return stock.reserve(pending.orderId(), pending.lines(), timings.hold()).handle((state, failure) -> {
      if (failure == null) {
        return confirmAndPlace(pending);
      }
      Throwable cause = Failures.cause(failure);
      if (cause instanceof OutOfStockException short_) {
        return reject(pending, new Rejection(Rejection.OUT_OF_STOCK, short_.shortages()));
      }
      if (cause instanceof NotStockedException missing) {
        long requested = pending.lines().stream()
            .filter(l -> l.productId().equals(missing.productId()) && l.warehouseId().equals(missing.warehouseId()))
            .mapToLong(OrderLine::quantity).sum();
        return reject(pending, new Rejection(Rejection.NOT_STOCKED, List.of(missing.asShortage(requested))));
      }
      if (isReason(cause, StockReservations.TOO_LARGE)) {
        return reject(pending, new Rejection(Rejection.TOO_LARGE, List.of()));
      }
      if (isReason(cause, StockReservations.RELEASED)) {
        // A tombstone: the recovery gave up on this order before its hold arrived.
        return reject(pending, new Rejection(Rejection.ABANDONED, List.of()));
      }
      return CompletableFuture.<Order>failedFuture(cause); // unknown: the order stays PENDING
    }).thenCompose(next -> next);
  }

  /** Confirms a held reservation, then writes the order PLACED; a hold released meanwhile rejects it. */
  private CompletableFuture<Order> confirmAndPlace(Order pending) {
    return stock.confirm(pending.orderId()).handle((state, failure) -> {
      if (failure == null) {
        return finish(pending, pending.movedTo(OrderStatus.PLACED, clock.instant(), Optional.empty()));
      }
      Throwable cause = Failures.cause(failure);
      if (isReason(cause, StockReservations.RELEASED)) {
        return reject(pending, new Rejection(Rejection.HOLD_EXPIRED, List.of()));
      }
      return CompletableFuture.<Order>failedFuture(cause);
    }).thenCompose(next -> next);
  }

  /**
   * Decides a PENDING order's fate at its reservation, then writes it: the fence (a release for
   * ORDER_REJECTED) frees a hold, or leaves a tombstone where there is none, and only then is the order
   * written REJECTED. The fence never undoes a confirm: refused because the reservation is confirmed (or
   * committed), it means another path (the buyer's retry, another instance, the recovery) placed the
   * order, which is then placed here too, not rejected.
   */
  private CompletableFuture<Order> reject(Order pending, Rejection why) {
    return stock.release(pending.orderId(), StockReservations.Cause.ORDER_REJECTED).handle((state, failure) -> {
      if (failure == null) {
        return finish(pending, pending.rejected(why, clock.instant()));
      }
      Throwable cause = Failures.cause(failure);
      if (isReason(cause, StockReservations.CONFIRMED) || isReason(cause, StockReservations.COMMITTED)) {
        overruled.increment();
        Events.info(log, "rejection_overruled").addKeyValue("order_id", pending.orderId())
            .addKeyValue("reason", why.reason()).addKeyValue("reservation", ((ClientFacingException) cause).reason()).log();
        return finish(pending, pending.movedTo(OrderStatus.PLACED, clock.instant(), Optional.empty()));
      }
      return CompletableFuture.<Order>failedFuture(cause); // unknown: the order stays PENDING
    }).thenCompose(next -> next);
  }

  /**
   * Writes a PENDING order's end, PLACED or REJECTED. Another actor (a retry of the same request, or the
   * recovery) may have ended it first: then its end is the answer, whichever it was, since both followed
   * the same reservation.
   */
  private CompletableFuture<Order> finish(Order pending, Order finished) {
    return repository.finishPlacing(pending, finished).exceptionallyCompose(failure -> {
      Throwable cause = Failures.cause(failure);
      if (!(cause instanceof StaleOrderException)) {
        return CompletableFuture.failedFuture(cause);
      }
      return repository.find(pending.orderId(), true).thenApply(found -> {
        Order now = found.orElseThrow(() -> notFound(pending.orderId()));
        if (now.status() == OrderStatus.PENDING) {
          throw new AbortedException("CONCURRENT_UPDATE", "order " + pending.orderId() + " kept changing; retry",
              Map.of("order_id", pending.orderId()));
        }
        return now;
      });
    });
  }

  /** The failure a REJECTED order's PlaceOrder answers, every time it is asked. */
  static ClientFacingException rejectionError(Order order) {
    Rejection why = order.rejection().orElse(new Rejection(Rejection.ABANDONED, List.of()));
    return switch (why.reason()) {
      case Rejection.OUT_OF_STOCK -> new OutOfStockException(order.orderId(), why.shortages());
      case Rejection.NOT_STOCKED -> why.shortages().isEmpty()
          ? new NotFoundException(Rejection.NOT_STOCKED, "a product of order " + order.orderId() + " is not stocked")
          : new NotStockedException(why.shortages().get(0).productId(), why.shortages().get(0).warehouseId());
      case Rejection.TOO_LARGE -> new FailedPreconditionException(Rejection.TOO_LARGE, "order " + order.orderId()
          + " was not placed: its lines of products sold from several stock buckets need more than one database"
          + " transaction holds; place them in smaller orders", Map.of("order_id", order.orderId()));
      case Rejection.HOLD_EXPIRED -> new FailedPreconditionException(Rejection.HOLD_EXPIRED, "order " + order.orderId()
          + " was not placed: its stock was released before it could be confirmed; place it again with a new request_id",
          Map.of("order_id", order.orderId()));
      default -> new FailedPreconditionException(why.reason(), "order " + order.orderId()
          + " was not placed: no stock was held for it in time; place it again with a new request_id",
          Map.of("order_id", order.orderId()));
    };
  }

  public CompletableFuture<Order> getOrder(String orderId, boolean consistentRead) {
    return getOrder(orderId, consistentRead, Optional.empty());
  }

  /**
   * The order, when {@code scope} (a caller limited to its own customer's orders) admits it; an order out of
   * scope and one that does not exist are refused alike (PERMISSION_DENIED, AIP-211).
   */
  public CompletableFuture<Order> getOrder(String orderId, boolean consistentRead, Optional<CallerScope> scope) {
    return repository.find(orderId, consistentRead).thenApply(found -> inScope(found, scope).orElseThrow(() -> notFound(orderId)));
  }

  /** {@code found}, or a refusal when {@code scope} does not admit it (whether or not it exists). */
  private static Optional<Order> inScope(Optional<Order> found, Optional<CallerScope> scope) {
    if (scope.isPresent() && !found.map(order -> scope.get().admits(order.customerId())).orElse(false)) {
      throw scope.get().refusal("orders");
    }
    return found;
  }

  public CompletableFuture<Page<Order>> listCustomerOrders(String customerId, OrderPageQuery query) {
    return repository.listByCustomer(customerId, query);
  }

  /** Orders whose step is due now, most overdue first (A10). */
  public CompletableFuture<Page<Order>> listStalledOrders(int pageSize, String pageToken) {
    return repository.listStalled(clock.instant(), pageSize, pageToken);
  }

  /**
   * Moves an order to {@code next}. With an expected version, one round: a mismatch is ABORTED. Without
   * one, a concurrent change makes us read again and re-check the transition, up to
   * {@value #STATUS_CHANGE_ROUNDS} rounds. A move that owes the inventory a step (CANCELLED: release;
   * SHIPPED: commit) is written with it, then the step is made; if it cannot be made now, the change
   * stands and the recovery makes it. A move to the status the order already has is answered with the
   * order as it is, whatever version was expected (a repeated change, not an error).
   */
  public CompletableFuture<Order> updateOrderStatus(String orderId, OrderStatus next, Optional<Long> expectedVersion) {
    return updateOrderStatus(orderId, next, expectedVersion, Optional.empty());
  }

  /** As above, for a caller limited to {@code scope}: an order out of it is refused before anything else is checked. */
  public CompletableFuture<Order> updateOrderStatus(String orderId, OrderStatus next, Optional<Long> expectedVersion,
      Optional<CallerScope> scope) {
    return updateRound(orderId, next, expectedVersion, scope, 1).thenCompose(this::makeStep);
  }

  private CompletableFuture<Order> updateRound(String orderId, OrderStatus next, Optional<Long> expectedVersion,
      Optional<CallerScope> scope, int round) {
    return repository.find(orderId, true)
        .thenCompose(found -> {
          Order current = inScope(found, scope).orElseThrow(() -> notFound(orderId));
          if (current.status() == next) {
            // The change already happened (this caller's earlier try, or another's): answered as it is,
            // whatever version the caller expected, and a step it still owes is tried again below.
            return CompletableFuture.completedFuture(current);
          }
          if (expectedVersion.isPresent() && expectedVersion.get() != current.version()) {
            throw versionMismatch(orderId, expectedVersion.get(), current.version());
          }
          if (!current.status().canMoveTo(next)) {
            throw new FailedPreconditionException("INVALID_STATUS_TRANSITION",
                "order " + orderId + " cannot move from " + current.status() + " to " + next,
                Map.of("order_id", orderId, "from", current.status().name(), "to", next.name()));
          }
          Instant now = clock.instant();
          // A step still owed goes on with the order (DELIVERED keeps SHIPPED's COMMIT): dropping it would
          // leave the units on hand and reserved for good. Today no move that owes a step of its own starts
          // from one that owes another.
          Optional<PendingStep> step = current.buysStock()
              ? next.stockStep().map(s -> new PendingStep(s, now.plus(timings.stepGrace()))) : Optional.empty();
          if (step.isEmpty()) {
            step = current.pending().filter(p -> p.step() != StockStep.PLACE);
          }
          return repository.changeStatus(current, current.movedTo(next, now, step));
        })
        .exceptionallyCompose(failure -> {
          Throwable cause = Failures.cause(failure);
          if (!(cause instanceof StaleOrderException)) {
            return CompletableFuture.failedFuture(cause);
          }
          if (expectedVersion.isPresent()) {
            return CompletableFuture.failedFuture(new AbortedException("VERSION_MISMATCH",
                "order " + orderId + " is no longer at version " + expectedVersion.get(),
                Map.of("order_id", orderId, "expected_version", Long.toString(expectedVersion.get()))));
          }
          if (round >= STATUS_CHANGE_ROUNDS) {
            return CompletableFuture.failedFuture(new AbortedException("CONCURRENT_UPDATE",
                "order " + orderId + " kept changing concurrently; retry", Map.of("order_id", orderId)));
          }
          return updateRound(orderId, next, expectedVersion, scope, round + 1);
        });
  }

  /**
   * Makes the RELEASE or COMMIT step {@code order} owes, then marks it done, within the step budget. Never
   * fails: a step that cannot be made now, or not within the budget, stays owed, for the recovery, and the
   * order is answered as written (the caller learns the change happened, promptly, whatever the inventory does).
   */
  private CompletableFuture<Order> makeStep(Order order) {
    if (order.pending().isEmpty() || order.pending().get().step() == StockStep.PLACE) {
      return CompletableFuture.completedFuture(order);
    }
    CompletableFuture<Order> answer = new CompletableFuture<>();
    releaseOrCommit(order).whenComplete((done, failure) -> {
      if (failure != null) {
        Events.warn(log, "stock_step_deferred").addKeyValue("order_id", order.orderId())
            .addKeyValue("step", order.pending().get().step().name())
            .addKeyValue("detail", Failures.cause(failure).getMessage())
            .addKeyValue("recovery_after", order.pending().get().due().toString()).log();
        answer.complete(order);
      } else {
        answer.complete(done);
      }
    });
    delay.after(timings.stepBudget()).thenRun(() -> {
      if (answer.complete(order)) {
        Events.info(log, "stock_step_deferred").addKeyValue("order_id", order.orderId())
            .addKeyValue("step", order.pending().get().step().name())
            .addKeyValue("detail", "not made within the step budget")
            .addKeyValue("recovery_after", order.pending().get().due().toString()).log();
      }
    });
    return answer;
  }

  /** Makes {@code order}'s owed RELEASE or COMMIT step at the inventory, then marks it done; completes with the order owing nothing. */
  private CompletableFuture<Order> releaseOrCommit(Order order) {
    boolean release = order.pending().get().step() == StockStep.RELEASE;
    CompletableFuture<StockReservations.State> call = release
        ? stock.release(order.orderId(), StockReservations.Cause.ORDER_CANCELLED) : stock.commit(order.orderId());
    return call.whenComplete((state, failure) -> {
      Throwable cause = failure == null ? null : Failures.cause(failure);
      String refusedFor = release ? StockReservations.COMMITTED : StockReservations.RELEASED;
      if (cause != null && isReason(cause, refusedFor)) {
        String kind = release ? RELEASE_OF_COMMITTED : COMMIT_OF_RELEASED;
        integrityViolations(kind).increment();
        Events.error(log, "stock_integrity_violation").addKeyValue("kind", kind).addKeyValue("order_id", order.orderId())
            .addKeyValue("status", order.status().name()).log();
      }
    }).thenCompose(state -> repository.stepDone(order)).thenApply(done -> order.stepDone());
  }

  /**
   * Finishes what {@code orderId} still owes, as the recovery loop does once its step is due: a PENDING
   * order is placed if its stock is held (confirming a HELD reservation), and rejected if it is not (its
   * reservation released, or none: a tombstone then keeps a late hold from succeeding); a RELEASE or COMMIT
   * step is made. Completes with the order as it is afterwards, or fails as the step did (it stays owed,
   * and the next round tries again).
   */
  public CompletableFuture<Order> recover(String orderId) {
    return repository.find(orderId, true).thenCompose(found -> {
      if (found.isEmpty() || found.get().pending().isEmpty()) {
        return CompletableFuture.completedFuture(found.orElse(null)); // done meanwhile (the index lags)
      }
      Order order = found.get();
      if (order.pending().get().step() != StockStep.PLACE) {
        return releaseOrCommit(order);
      }
      if (order.status() != OrderStatus.PENDING) {
        return repository.stepDone(order).thenApply(done -> order.stepDone()); // cannot happen; heals it
      }
      return stock.find(orderId).thenCompose(state -> {
        if (state.isEmpty()) {
          return reject(order, new Rejection(Rejection.ABANDONED, List.of()));
        }
        return switch (state.get()) {
          case HELD -> confirmAndPlace(order);
          case CONFIRMED, COMMITTED -> finish(order, order.movedTo(OrderStatus.PLACED, clock.instant(), Optional.empty()));
          case RELEASED -> finish(order, order.rejected(new Rejection(Rejection.HOLD_EXPIRED, List.of()), clock.instant()));
          // Fenced before any hold (a round whose REJECTED write did not land): abandoned, as that round decided.
          case TOMBSTONE -> finish(order, order.rejected(new Rejection(Rejection.ABANDONED, List.of()), clock.instant()));
        };
      });
    });
  }

  private static boolean isReason(Throwable cause, String reason) {
    return cause instanceof ClientFacingException se && se.reason().equals(reason);
  }

  private static AbortedException versionMismatch(String orderId, long expected, long actual) {
    return new AbortedException("VERSION_MISMATCH",
        "order " + orderId + " is at version " + actual + ", not " + expected,
        Map.of("order_id", orderId, "expected_version", Long.toString(expected), "current_version", Long.toString(actual)));
  }

  private static NotFoundException notFound(String orderId) {
    return new NotFoundException("ORDER_NOT_FOUND", "no order has id " + orderId, Map.of("order_id", orderId));
  }
}
