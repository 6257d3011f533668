package dev.warehouse.simulation;

import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.domain.StockStep;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** What must hold after every step of a {@link SagaWorld}, and what must have happened once it is quiet. */
final class Invariants {

  /** Statuses of a sold order: its units are the customer's. */
  static final Set<OrderStatus> SOLD = EnumSet.of(OrderStatus.PLACED, OrderStatus.PAID, OrderStatus.SHIPPED,
      OrderStatus.DELIVERED);

  private Invariants() {}

  static void check(SagaWorld world) {
    checkStock(world);
    for (Order order : world.orders.orders.values()) {
      checkOrder(world, order);
    }
    for (Reservation r : world.reservations.reservations.values()) {
      if (!world.orders.orders.containsKey(r.orderId())) {
        fail(world, "reservation of " + r.orderId() + " belongs to no order");
      }
    }
  }

  /** quantity >= reserved >= 0; reserved is the sum of the open holds; units leave only by commits. */
  private static void checkStock(SagaWorld world) {
    for (Map.Entry<String, MemoryReservations.Stock> e : world.reservations.stock.entrySet()) {
      MemoryReservations.Stock s = e.getValue();
      long held = 0;
      long committed = 0;
      for (Reservation r : world.reservations.reservations.values()) {
        for (ReservationLine line : r.lines()) {
          if (!MemoryReservations.key(line.productId(), line.warehouseId()).equals(e.getKey())) {
            continue;
          }
          if (r.holds()) {
            held += line.quantity();
          } else if (r.state() == State.COMMITTED) {
            committed += line.quantity();
          }
        }
      }
      if (s.reserved < 0 || s.reserved > s.quantity) {
        fail(world, e.getKey() + ": reserved " + s.reserved + " outside 0.." + s.quantity);
      }
      if (s.reserved != held) {
        fail(world, e.getKey() + ": reserved " + s.reserved + " but open holds sum to " + held);
      }
      if (s.quantity != world.initialUnits() - committed) {
        fail(world, e.getKey() + ": " + s.quantity + " on hand, but " + world.initialUnits() + " less " + committed
            + " committed");
      }
    }
  }

  private static void checkOrder(SagaWorld world, Order order) {
    Optional<Reservation> found = world.reservationOf(order.orderId());
    Optional<State> state = found.map(Reservation::state);
    Optional<StockStep> owed = order.pending().map(p -> p.step());
    String seen = order.orderId() + " " + order.status() + owed.map(s -> " owing " + s).orElse("") + ", reservation "
        + state.map(Enum::name).orElse("none");
    if (SOLD.contains(order.status())) {
      boolean shipped = order.status() == OrderStatus.SHIPPED || order.status() == OrderStatus.DELIVERED;
      boolean committedOrOwed = shipped
          ? state.equals(Optional.of(State.COMMITTED))
              || state.equals(Optional.of(State.CONFIRMED)) && owed.equals(Optional.of(StockStep.COMMIT))
          : state.equals(Optional.of(State.CONFIRMED));
      if (!committedOrOwed) {
        fail(world, "a sold order does not hold its stock: " + seen);
      }
      if (!found.get().lines().equals(SagaWorld.held(order))) {
        fail(world, "a sold order's reservation holds other lines: " + seen);
      }
      if (world.answers.get(order.orderId()) == SagaWorld.Answer.REFUSED) {
        fail(world, "a buyer was refused, and its order was sold: " + seen);
      }
    }
    if (order.status() == OrderStatus.CANCELLED || order.status() == OrderStatus.REJECTED) {
      boolean holds = found.map(Reservation::holds).orElse(false) || state.equals(Optional.of(State.COMMITTED));
      if (holds && !owed.equals(Optional.of(StockStep.RELEASE))) {
        fail(world, "an order that gave up its stock still holds it: " + seen);
      }
    }
    if (order.status() == OrderStatus.REJECTED && world.answers.get(order.orderId()) == SagaWorld.Answer.PLACED) {
      fail(world, "a buyer was told PLACED, and its order was rejected: " + seen);
    }
    if (order.status() == OrderStatus.PENDING && state.equals(Optional.of(State.COMMITTED))) {
      fail(world, "a pending order's stock left the warehouse: " + seen);
    }
  }

  /** Once quiet: every order ended, owing nothing, and no hold is left open without a sold order. */
  static void checkEnded(SagaWorld world) {
    check(world);
    for (Order order : world.orders.orders.values()) {
      if (order.status() == OrderStatus.PENDING || order.pending().isPresent()) {
        fail(world, "faults stopped long ago, and " + order.orderId() + " is still " + order.status()
            + order.pending().map(p -> " owing " + p.step()).orElse(""));
      }
    }
    for (Reservation r : world.reservations.reservations.values()) {
      if (r.state() == State.HELD) {
        fail(world, "faults stopped long ago, and " + r.orderId() + "'s hold is still open");
      }
    }
  }

  private static void fail(SagaWorld world, String what) {
    throw new InvariantViolation(world.seed(), what, world.trace());
  }

  /** A broken invariant, with the seed that replays it and the last steps before it. */
  static final class InvariantViolation extends AssertionError {
    InvariantViolation(long seed, String what, java.util.List<String> trace) {
      super("seed " + seed + ": " + what + "\n  replay: ./mvnw -pl simulation test -Dsim.seed=" + seed
          + "\n  last steps:\n    " + String.join("\n    ", trace.subList(Math.max(0, trace.size() - 60), trace.size())));
    }
  }
}
