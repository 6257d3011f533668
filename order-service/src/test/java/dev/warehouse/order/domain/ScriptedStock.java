package dev.warehouse.order.domain;

import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.NotFoundException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The inventory's reservations as {@link StockReservations} promises them, in memory and answered at once:
 * each order's reservation state, moved by the inventory's rules (a rejection's release never frees a
 * confirm; a step on a released reservation is RESERVATION_RELEASED). A test scripts what the inventory
 * does besides: {@link #before} runs ahead of every call (to release a hold before its confirm, say), and
 * {@link #failing} answers a call with a failure instead of making it.
 */
public final class ScriptedStock implements StockReservations {

  /** Runs ahead of a call ({@code operation}: reserve, confirm, commit, release, find). */
  public interface Hook {
    void before(String operation, String orderId);
  }

  /** A failure to answer with instead of making the call, or empty to make it. */
  public interface Faults {
    Optional<RuntimeException> of(String operation, String orderId);
  }

  public final Map<String, State> states = new ConcurrentHashMap<>();
  /** Every call made, as "operation orderId", in order. */
  public final List<String> calls = new CopyOnWriteArrayList<>();
  public volatile Hook before = (operation, orderId) -> {};
  public volatile Faults failing = (operation, orderId) -> Optional.empty();

  private <T> Optional<CompletableFuture<T>> enter(String operation, String orderId) {
    calls.add(operation + " " + orderId);
    before.before(operation, orderId);
    return failing.of(operation, orderId).map(e -> CompletableFuture.<T>failedFuture(e));
  }

  private static FailedPreconditionException refused(String reason, String orderId) {
    return new FailedPreconditionException(reason, "the order's reservation is " + reason, Map.of("order_id", orderId));
  }

  @Override
  public CompletableFuture<State> reserve(String orderId, List<OrderLine> lines, Duration hold) {
    return this.<State>enter("reserve", orderId).orElseGet(() -> {
      State current = states.get(orderId);
      if (current == State.RELEASED || current == State.TOMBSTONE) {
        return CompletableFuture.failedFuture(refused(RELEASED, orderId));
      }
      if (current == null) {
        states.put(orderId, State.HELD);
      }
      return CompletableFuture.completedFuture(states.get(orderId));
    });
  }

  @Override
  public CompletableFuture<State> confirm(String orderId) {
    return this.<State>enter("confirm", orderId).orElseGet(() -> {
      State current = states.get(orderId);
      if (current == null) {
        return CompletableFuture.failedFuture(new NotFoundException("RESERVATION_NOT_FOUND", "no reservation"));
      }
      return switch (current) {
        case HELD -> {
          states.put(orderId, State.CONFIRMED);
          yield CompletableFuture.completedFuture(State.CONFIRMED);
        }
        case CONFIRMED, COMMITTED -> CompletableFuture.completedFuture(current);
        case RELEASED, TOMBSTONE -> CompletableFuture.failedFuture(refused(RELEASED, orderId));
      };
    });
  }

  @Override
  public CompletableFuture<State> commit(String orderId) {
    return this.<State>enter("commit", orderId).orElseGet(() -> {
      State current = states.get(orderId);
      if (current == null) {
        return CompletableFuture.failedFuture(new NotFoundException("RESERVATION_NOT_FOUND", "no reservation"));
      }
      return switch (current) {
        case CONFIRMED -> {
          states.put(orderId, State.COMMITTED);
          yield CompletableFuture.completedFuture(State.COMMITTED);
        }
        case COMMITTED -> CompletableFuture.completedFuture(current);
        case HELD -> CompletableFuture.failedFuture(refused("RESERVATION_NOT_CONFIRMED", orderId));
        case RELEASED, TOMBSTONE -> CompletableFuture.failedFuture(refused(RELEASED, orderId));
      };
    });
  }

  @Override
  public CompletableFuture<State> release(String orderId, Cause cause) {
    return this.<State>enter("release", orderId).orElseGet(() -> {
      State current = states.get(orderId);
      if (current == null) {
        states.put(orderId, State.TOMBSTONE);
        return CompletableFuture.completedFuture(State.TOMBSTONE);
      }
      return switch (current) {
        case HELD -> {
          states.put(orderId, State.RELEASED);
          yield CompletableFuture.completedFuture(State.RELEASED);
        }
        case CONFIRMED -> {
          if (cause != Cause.ORDER_CANCELLED) {
            yield CompletableFuture.failedFuture(refused(CONFIRMED, orderId));
          }
          states.put(orderId, State.RELEASED);
          yield CompletableFuture.completedFuture(State.RELEASED);
        }
        case COMMITTED -> CompletableFuture.failedFuture(refused(COMMITTED, orderId));
        case RELEASED, TOMBSTONE -> CompletableFuture.completedFuture(current);
      };
    });
  }

  @Override
  public CompletableFuture<Optional<State>> find(String orderId) {
    return this.<Optional<State>>enter("find", orderId)
        .orElseGet(() -> CompletableFuture.completedFuture(Optional.ofNullable(states.get(orderId))));
  }
}
