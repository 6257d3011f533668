package dev.warehouse.simulation;

import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.domain.Reservations;
import dev.warehouse.inventory.expiry.HoldExpiry;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OrderService;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.domain.PlaceOrderCommand;
import dev.warehouse.order.domain.SagaTimings;
import dev.warehouse.order.recovery.OrderRecovery;
import dev.warehouse.runtime.grpc.GrpcErrors;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One run of the order saga: two order-service and two inventory-service instances (the real
 * {@link OrderService}, {@link OrderRecovery}, {@link Reservations} and {@link HoldExpiry} on in-memory
 * repositories), buyers racing for a few units and retrying with their request id on another instance,
 * customers cancelling and moving placed orders, and faults while they do: instances crash and restart,
 * freeze, run on skewed clocks; database answers are lost and transactions conflict; messages between
 * the services are lost. The invariants are checked after every step, and once the faults stop, every
 * order must reach its end within the step grace, the hold and two rounds.
 */
final class SagaWorld {

  static final String PRODUCT = "P1";
  static final String WAREHOUSE = "W1";
  static final List<String> ORDER_NODES = List.of("order-1", "order-2");
  static final List<String> INVENTORY_NODES = List.of("inventory-1", "inventory-2");

  // The deployment's settings, scaled to the simulation: grace shorter than the hold, as start-up demands.
  static final Duration STEP_GRACE = Duration.ofMillis(2_000);
  static final Duration HOLD = Duration.ofMillis(5_000);
  static final Duration STEP_BUDGET = Duration.ofMillis(300);
  static final long RECOVERY_PERIOD = 1_000;
  static final long SWEEP_PERIOD = 1_000;
  static final long INVENTORY_DEADLINE = 1_000;
  static final long FAULT_PHASE = 8_000;

  /** What a buyer was last told. */
  enum Answer { NONE, PLACED, REFUSED }

  private final Sim sim;
  private final long seed;
  private final MemoryDb db;
  final MemoryOrders orders;
  final MemoryReservations reservations;
  private final SimInventoryLink link;
  private final ScheduledExecutorService idleScheduler;
  private final Map<String, OrderService> orderServices = new LinkedHashMap<>();
  private final Map<String, Reservations> inventoryServices = new LinkedHashMap<>();
  private final Map<String, Long> downUntil = new LinkedHashMap<>();
  final Map<String, Answer> answers = new LinkedHashMap<>();
  private final long initialUnits;
  private boolean faulty = true;
  private final double crashRate;
  private final double freezeRate;

  SagaWorld(long seed, ScheduledExecutorService idleScheduler) {
    this.seed = seed;
    this.sim = new Sim(seed);
    this.idleScheduler = idleScheduler;
    this.db = new MemoryDb(sim);
    this.orders = new MemoryOrders(db);
    this.reservations = new MemoryReservations(db);
    this.link = new SimInventoryLink(sim, new SimInventoryLink.Inventory() {
      @Override
      public Optional<String> liveInstance() {
        List<String> up = INVENTORY_NODES.stream().filter(SagaWorld.this::up).toList();
        return up.isEmpty() ? Optional.empty() : Optional.of(sim.pick(up));
      }

      @Override
      public Reservations reservations(String node) {
        return inventoryServices.get(node);
      }
    }, INVENTORY_DEADLINE);
    initialUnits = 1 + sim.random.nextInt(4);
    reservations.stock.put(MemoryReservations.key(PRODUCT, WAREHOUSE), new MemoryReservations.Stock(initialUnits));
    crashRate = sim.random.nextDouble() * 0.3;
    freezeRate = sim.random.nextDouble() * 0.3;
    db.faults(sim.random.nextDouble() * 0.1, sim.random.nextDouble() * 0.1);
    link.lostMessages(sim.random.nextDouble() * 0.1);
    for (String node : ORDER_NODES) {
      if (sim.chance(0.5)) {
        sim.skew(node, sim.random.nextInt(2 * (int) STEP_GRACE.toMillis() + 1) - STEP_GRACE.toMillis());
      }
      startOrderNode(node);
    }
    INVENTORY_NODES.forEach(this::startInventoryNode);
  }

  boolean up(String node) {
    return downUntil.getOrDefault(node, -1L) <= sim.now();
  }

  private void startOrderNode(String node) {
    OrderService service = new OrderService(orders, link, sim.clock(node), wait -> {
      java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
      sim.after(wait.toMillis(), node, "step budget", () -> done.complete(null));
      return done;
    }, new SagaTimings(STEP_GRACE, HOLD, STEP_BUDGET), new SimpleMeterRegistry());
    orderServices.put(node, service);
    OrderRecovery recovery = new OrderRecovery(service, sim.clock(node), new SimpleMeterRegistry());
    every(node, RECOVERY_PERIOD, "recovery round", recovery::round);
  }

  private void startInventoryNode(String node) {
    // The inventory's default hold is never used: the order-service asks for its own (HOLD) in each ReserveStock.
    Reservations service = new Reservations(reservations, sim.clock(node), Duration.ofMinutes(1), new SimpleMeterRegistry());
    inventoryServices.put(node, service);
    HoldExpiry expiry = new HoldExpiry(service, sim.clock(node), Duration.ofMillis(SWEEP_PERIOD), idleScheduler,
        new SimpleMeterRegistry());
    every(node, SWEEP_PERIOD, "expiry sweep", expiry::sweep);
  }

  /** A loop of {@code node}'s current life, as its scheduler runs it: a crash ends it, a restart starts a new one. */
  private void every(String node, long period, String what, Runnable body) {
    sim.after(period, node, what, () -> {
      body.run();
      every(node, period, what, body);
    });
  }

  /** Crashes {@code node}; it comes back, with fresh objects, after {@code downMillis}. */
  private void crash(String node, long downMillis) {
    sim.crash(node);
    downUntil.put(node, sim.now() + downMillis);
    sim.after(downMillis, Sim.CLIENTS, "restart " + node, () -> {
      sim.note("restart " + node);
      if (ORDER_NODES.contains(node)) {
        startOrderNode(node);
      } else {
        startInventoryNode(node);
      }
    });
  }

  /** The run: buyers, customers and faults until the fault phase ends, then quiet until every order has ended. */
  void run() {
    int buyers = 2 + sim.random.nextInt(7);
    for (int b = 0; b < buyers; b++) {
      String buyer = "b" + b;
      long units = 1 + sim.random.nextInt(2);
      sim.after(sim.random.nextInt(3_000), Sim.CLIENTS, "buyer " + buyer, () -> buy(buyer, units, 1));
    }
    faults(0);
    long end = FAULT_PHASE + STEP_GRACE.toMillis() + HOLD.toMillis() + 2 * RECOVERY_PERIOD + 2 * MemoryDb.TIMEOUT_MILLIS
        + 4 * INVENTORY_DEADLINE + 3_000;
    while (sim.step(end)) {
      if (faulty && sim.now() >= FAULT_PHASE) {
        faulty = false;
        db.faults(0, 0);
        link.lostMessages(0);
        sim.note("faults stop");
      }
      Invariants.check(this);
    }
    Invariants.checkEnded(this);
    orders.orders.values().forEach(o -> sim.count("order ended " + o.status()));
    answers.values().forEach(a -> sim.count("buyer told " + a));
  }

  /** What this run explored (see {@link Sim#count}). */
  java.util.Map<String, Long> counts() {
    return sim.counts();
  }

  long initialUnits() {
    return initialUnits;
  }

  long seed() {
    return seed;
  }

  List<String> trace() {
    return sim.trace();
  }

  /** Every 100-400 ms of the fault phase: maybe crash or freeze an instance. */
  private void faults(int round) {
    sim.after(100 + sim.random.nextInt(300), Sim.CLIENTS, "faults", () -> {
      if (!faulty) {
        return;
      }
      List<String> all = new ArrayList<>(ORDER_NODES);
      all.addAll(INVENTORY_NODES);
      String node = sim.pick(all);
      if (up(node) && sim.chance(crashRate)) {
        crash(node, 50 + sim.random.nextInt(3_000));
      } else if (up(node) && !sim.frozen(node) && sim.chance(freezeRate)) {
        sim.freeze(node, sim.now() + 100 + sim.random.nextInt(4_000));
      }
      faults(round + 1);
    });
  }

  // ------------------------------------------------------------------------------------------- actors

  /** A buyer's attempt: PlaceOrder on a live instance; retried with the same request id on a retryable answer. */
  private void buy(String buyer, long units, int attempt) {
    List<String> up = ORDER_NODES.stream().filter(this::up).toList();
    if (up.isEmpty()) {
      sim.after(250, Sim.CLIENTS, buyer + " retry", () -> buy(buyer, units, attempt + 1));
      return;
    }
    String node = sim.pick(up);
    Money price = new Money("EUR", 5, 0);
    PlaceOrderCommand command = new PlaceOrderCommand("C-" + buyer, Optional.of("O-" + buyer), Optional.empty(),
        List.of(new OrderLine(PRODUCT, WAREHOUSE, units, price)), price.times(units), "r-" + buyer);
    long deadline = 200 + sim.random.nextInt(6_000);
    boolean[] answered = {false};
    sim.note(buyer + " #" + attempt + " PlaceOrder on " + node);
    sim.run(node, "PlaceOrder " + buyer, () -> orderServices.get(node).placeOrder(command).whenComplete((order, failure) ->
        sim.run(Sim.CLIENTS, buyer + " answer", () -> {
          if (answered[0]) {
            return;
          }
          answered[0] = true;
          heard(buyer, units, attempt, order, failure == null ? Status.Code.OK
              : GrpcErrors.toStatusException(failure).getStatus().getCode());
        })));
    sim.after(deadline, Sim.CLIENTS, buyer + " deadline", () -> {
      if (!answered[0]) {
        answered[0] = true;
        heard(buyer, units, attempt, null, Status.Code.DEADLINE_EXCEEDED);
      }
    });
  }

  private void heard(String buyer, long units, int attempt, Order order, Status.Code code) {
    sim.note(buyer + " #" + attempt + " answered " + code + (order == null ? "" : " " + order.status()));
    sim.count("PlaceOrder answered " + code);
    switch (code) {
      case OK -> {
        answers.put(order.orderId(), order.status() == OrderStatus.PLACED ? Answer.PLACED : Answer.NONE);
        if (sim.chance(0.5)) {
          sim.after(sim.random.nextInt(2_000), Sim.CLIENTS, buyer + " moves", () -> move(order.orderId(), nextMove(), 1));
        }
      }
      case UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, RESOURCE_EXHAUSTED -> {
        if (attempt < 6) {
          sim.after(250, Sim.CLIENTS, buyer + " retry", () -> buy(buyer, units, attempt + 1));
        }
      }
      default -> answers.put("O-" + buyer, Answer.REFUSED);
    }
  }

  private OrderStatus nextMove() {
    return sim.chance(0.4) ? OrderStatus.CANCELLED : OrderStatus.PAID;
  }

  /** A customer's status change (no expected version), retried on a retryable answer; PAID goes on to ship and deliver. */
  private void move(String orderId, OrderStatus to, int attempt) {
    List<String> up = ORDER_NODES.stream().filter(this::up).toList();
    if (up.isEmpty() || attempt > 6) {
      return;
    }
    String node = sim.pick(up);
    boolean[] answered = {false};
    sim.note(orderId + " #" + attempt + " to " + to + " on " + node);
    sim.run(node, "UpdateOrderStatus " + orderId, () -> orderServices.get(node).updateOrderStatus(orderId, to, Optional.empty())
        .whenComplete((order, failure) -> sim.run(Sim.CLIENTS, orderId + " moved", () -> {
          if (answered[0]) {
            return;
          }
          answered[0] = true;
          Status.Code code = failure == null ? Status.Code.OK : GrpcErrors.toStatusException(failure).getStatus().getCode();
          sim.note(orderId + " to " + to + ": " + code);
          if (code == Status.Code.OK) {
            OrderStatus then = switch (to) {
              case PAID -> sim.chance(0.3) ? OrderStatus.CANCELLED : OrderStatus.SHIPPED;
              case SHIPPED -> OrderStatus.DELIVERED;
              default -> null;
            };
            if (then != null) {
              sim.after(sim.random.nextInt(1_500), Sim.CLIENTS, orderId + " next move", () -> move(orderId, then, 1));
            }
          } else if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.ABORTED) {
            sim.after(250, Sim.CLIENTS, orderId + " move retry", () -> move(orderId, to, attempt + 1));
          }
        })));
    sim.after(200 + sim.random.nextInt(5_000), Sim.CLIENTS, orderId + " move deadline", () -> {
      if (!answered[0]) {
        answered[0] = true;
        sim.after(250, Sim.CLIENTS, orderId + " move retry", () -> move(orderId, to, attempt + 1));
      }
    });
  }

  /** An order's lines as its reservation holds them. */
  static List<ReservationLine> held(Order order) {
    return ReservationLine.merged(order.lines().stream()
        .map(l -> new ReservationLine(l.productId(), l.warehouseId(), l.quantity())).toList());
  }

  Optional<Reservation> reservationOf(String orderId) {
    return Optional.ofNullable(reservations.reservations.get(orderId));
  }
}
