package dev.warehouse.simulation;

import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.domain.Reservations;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.StockReservations;
import dev.warehouse.order.stock.InventoryReservations;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.Status;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The order-service's calls to the inventory's reservations, as messages between simulated nodes: the
 * request reaches a live inventory instance (or is lost), its {@link Reservations} handles it there, and
 * the answer comes back (or is lost). A call unanswered by its deadline fails DEADLINE_EXCEEDED; as the
 * real client does, one that finds no instance is tried again within the deadline. The
 * inventory's errors cross as gRPC statuses, through the real mapper and the real translation.
 */
final class SimInventoryLink implements StockReservations {

  static final int MAX_ATTEMPTS = 3;

  /** Where the link finds a live inventory instance (empty: none is up) and its reservations. */
  interface Inventory {
    Optional<String> liveInstance();

    Reservations reservations(String node);
  }

  private final Sim sim;
  private final Inventory inventory;
  private final long deadlineMillis;
  private double lostMessages;

  SimInventoryLink(Sim sim, Inventory inventory, long deadlineMillis) {
    this.sim = sim;
    this.inventory = inventory;
    this.deadlineMillis = deadlineMillis;
  }

  void lostMessages(double rate) {
    this.lostMessages = rate;
  }

  @Override
  public CompletableFuture<State> reserve(String orderId, List<OrderLine> lines, java.time.Duration hold) {
    List<ReservationLine> held = lines.stream()
        .map(l -> new ReservationLine(l.productId(), l.warehouseId(), l.quantity())).toList();
    return call("ReserveStock " + orderId, orderId, r -> r.reserve(orderId, held, Optional.of(hold))).thenApply(SimInventoryLink::state);
  }

  @Override
  public CompletableFuture<State> confirm(String orderId) {
    return call("ConfirmReservation " + orderId, orderId, r -> r.confirm(orderId)).thenApply(SimInventoryLink::state);
  }

  @Override
  public CompletableFuture<State> commit(String orderId) {
    return call("CommitReservation " + orderId, orderId, r -> r.commit(orderId)).thenApply(SimInventoryLink::state);
  }

  @Override
  public CompletableFuture<State> release(String orderId, Cause cause) {
    Reservation.ReleaseCause why = Reservation.ReleaseCause.valueOf(cause.name());
    return call("ReleaseReservation " + orderId + " (" + cause + ")", orderId, r -> r.release(orderId, why))
        .thenApply(SimInventoryLink::state);
  }

  @Override
  public CompletableFuture<Optional<State>> find(String orderId) {
    return call("GetReservation " + orderId, orderId, r -> r.get(orderId, true))
        .thenApply(r -> Optional.of(state(r)))
        .exceptionally(failure -> {
          if (Failures.cause(failure) instanceof ClientFacingException se && se.reason().equals("RESERVATION_NOT_FOUND")) {
            return Optional.empty();
          }
          throw Failures.cause(failure) instanceof RuntimeException re ? re : new IllegalStateException(failure);
        });
  }

  private static State state(Reservation r) {
    if (r.state() == Reservation.State.RELEASED && r.releaseCause().orElse(null) == Reservation.ReleaseCause.BEFORE_RESERVE) {
      return State.TOMBSTONE;
    }
    return State.valueOf(r.state().name());
  }

  private <T> CompletableFuture<T> call(String what, String orderId, Function<Reservations, CompletableFuture<T>> handler) {
    String caller = sim.current();
    CompletableFuture<T> result = new CompletableFuture<>();
    attempt(what, orderId, handler, caller, result, 1, sim.now() + deadlineMillis);
    return result;
  }

  private <T> void attempt(String what, String orderId, Function<Reservations, CompletableFuture<T>> handler,
      String caller, CompletableFuture<T> result, int number, long deadline) {
    CompletableFuture<T> answer = new CompletableFuture<>();
    Optional<String> instance = inventory.liveInstance();
    if (instance.isEmpty()) {
      sim.after(1, caller, what + " unavailable", () -> answer.completeExceptionally(
          Status.UNAVAILABLE.withDescription("no inventory instance").asRuntimeException()));
    } else if (sim.chance(lostMessages)) {
      sim.note(what + " #" + number + ": request lost");
      sim.count("inventory request lost");
    } else {
      String node = instance.get();
      sim.run(node, what, () -> handler.apply(inventory.reservations(node)).whenComplete((value, failure) -> {
        if (sim.chance(lostMessages)) {
          sim.note(what + " #" + number + ": answer lost");
          sim.count("inventory answer lost");
          return;
        }
        sim.run(caller, what + " answer", () -> {
          if (failure != null) {
            answer.completeExceptionally(GrpcErrors.toStatusException(failure));
          } else {
            answer.complete(value);
          }
        });
      }));
    }
    sim.after(deadline - sim.now(), caller, what + " deadline", () -> answer.completeExceptionally(
        Status.DEADLINE_EXCEEDED.asRuntimeException()));
    answer.whenComplete((value, failure) -> {
      if (failure == null) {
        result.complete(value);
        return;
      }
      Status.Code code = Status.fromThrowable(failure).getCode();
      long backoff = 20L << (number - 1);
      // As the real client: only the transport's failures are tried again.
      if (code == Status.Code.UNAVAILABLE && !GrpcErrors.answeredByService(failure) && number < MAX_ATTEMPTS
          && sim.now() + backoff < deadline) {
        sim.after(backoff, caller, what + " retry", () -> attempt(what, orderId, handler, caller, result, number + 1, deadline));
        return;
      }
      RuntimeException translated = InventoryReservations.translate(failure, orderId);
      String reason = translated instanceof ClientFacingException se ? se.reason() : translated.getClass().getSimpleName();
      sim.note(what + " #" + number + ": " + code + " " + reason);
      sim.count(what.substring(0, what.indexOf(' ')) + " " + reason);
      result.completeExceptionally(translated);
    });
  }
}
