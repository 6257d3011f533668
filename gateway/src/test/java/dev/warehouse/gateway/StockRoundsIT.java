package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.ErrorInfo;
import com.google.type.Money;
import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.ReleaseCause;
import dev.warehouse.inventory.v1.Reservation;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.inventory.v1.ReservationState;
import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListStalledOrdersRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.testing.Statuses;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.StatusProto;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.SoftAssertions;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * Many rounds of the last units racing, each under one fault: per round a fresh product of
 * {@value #UNITS} units, {@value #BUYERS} careful buyers through the gateway (each asks again with the same
 * request_id until its order is decided), and at a random moment of the race one fault, taking the
 * kinds in turn: an inventory or an order instance, or one of each at once, SIGKILLed and started again on
 * its ports, or frozen
 * (SIGSTOP) for longer than the step grace and thawed. The jars run as processes, two instances of each
 * service and the gateway, on the strict launcher with injected TransactionConflicts.
 *
 * <p>After each round, once nothing is PENDING and nothing owes a step: every PLACED order holds its
 * stock (its reservation confirmed, the product's reserved units exactly those of the PLACED orders),
 * every REJECTED one holds none, no more than the units were sold, and every buyer was answered. The
 * measure is the buyers refused while stock was available: refused for good although fewer than the
 * units ended PLACED, and those the recovery gave up on past the grace (a sale lost had the units been
 * there). A kill whose instance is back well within the grace, even the only one of its service
 * ({@code -Drounds.instances=1}), may cost neither; a freeze past the grace may (the recovery gives up on an
 * order it cannot finish in time), so freezes are counted, not judged. At the end both audits are clean, and a table per kind is printed.
 *
 * <p>{@code -Drounds.perKind=N} (default 1) sets the rounds of each kind, {@code -Drounds.graceSeconds}
 * (default 3) the order-service's step grace (a freeze lasts two seconds longer),
 * {@code -Drounds.circuitOpenSeconds} (default 1) both circuit breakers' open time,
 * {@code -Drounds.instances} (default 2) the instances of each service, and
 * {@code -Drounds.kinds} (default all) which kinds run, e.g. {@code KILL_INVENTORY,KILL_ORDER}.
 */
class StockRoundsIT {

  private static final String INVENTORY_JAR = "inventory-service/target/inventory-service.jar";
  private static final String ORDER_JAR = "order-service/target/order-service.jar";
  private static final String GATEWAY_JAR = "gateway/target/gateway.jar";
  private static final int BUYERS = 16;
  private static final int UNITS = 5;
  private static final int WARM_UP_ORDERS = 8;
  /** Batches of warm-up orders before the stack is judged too slow to test: each takes seconds once warm. */
  private static final int WARM_UP_BATCHES = 5;

  private static final int ROUNDS_PER_KIND = Integer.getInteger("rounds.perKind", 1);
  private static final int GRACE_SECONDS = Integer.getInteger("rounds.graceSeconds", 3);
  private static final int CIRCUIT_OPEN_SECONDS = Integer.getInteger("rounds.circuitOpenSeconds", 1);
  /** Instances of each service: with one, a kill takes its whole service down until it is back. */
  private static final int INSTANCES = Integer.getInteger("rounds.instances", 2);
  /** Past the grace: the recovery takes the frozen instance's orders over while it hangs. */
  private static final Duration FREEZE = Duration.ofSeconds(GRACE_SECONDS + 2);
  /**
   * What an outage must leave of the grace for no sale to be lost: the buyers arrive over 1.5 s, so an order can be
   * due that much sooner after its fault, and a buyer asks again within a pause and a reconnection.
   */
  private static final Duration SHORT_OUTAGE_MARGIN = Duration.ofSeconds(2);
  /** A buyer's deadline per call, its pause before asking again, and when it gives up. */
  private static final Duration CALL = Duration.ofSeconds(5);
  private static final Duration RETRY_PAUSE = Duration.ofMillis(250);
  private static final Duration GIVE_UP = Duration.ofSeconds(60);
  /** Far beyond the grace plus a recovery round: a round that is not settled by then has a stuck order. */
  private static final Duration SETTLE = Duration.ofSeconds(GRACE_SECONDS + 60);

  /** The faults, taken in turn. */
  enum Fault {
    KILL_INVENTORY, KILL_ORDER,
    /** An instance of each service at once: both sides of the saga lose what they had in flight. */
    KILL_BOTH,
    FREEZE_INVENTORY, FREEZE_ORDER;

    boolean kill() {
      return this == KILL_INVENTORY || this == KILL_ORDER || this == KILL_BOTH;
    }
  }

  private static final String table = "rounds-" + UUID.randomUUID();
  private static final List<StackProcess> inventories = new ArrayList<>();
  private static final List<StackProcess> orders = new ArrayList<>();
  private static final Map<String, String> serviceEnv = new HashMap<>();
  private static final Map<String, String> orderEnv = new HashMap<>();
  private static final Random random = new Random();
  private static StackProcess gateway;
  private static ManagedChannel channel;
  /** Straight to the first inventory instance: the gateway does not route the reservations. */
  private static ManagedChannel reservationChannel;
  private static int starts;

  @BeforeAll
  static void start() throws Exception {
    StrictMoto.table(table).conflictRate(0.1).apply();
    // The serialized moto answers in seconds under the race: the 3 s default would time a restart's first call out.
    serviceEnv.putAll(Map.of("DYNAMODB_ENDPOINT", MotoServer.endpoint().toString(), "TABLE_NAME", table,
        "TABLE_AUTO_CREATE", "true", "SHUTDOWN_DRAIN_MS", "0", "SHUTDOWN_GRACE_SECONDS", "2",
        "DYNAMODB_CALL_TIMEOUT_MS", "10000"));
    for (int i = 0; i < INSTANCES; i++) {
      inventories.add(StackProcess.service("rounds-inventory-" + i, INVENTORY_JAR, StackProcess.freePort(),
          StackProcess.freePort(), serviceEnv).startAndAwaitPort());
    }
    String inventoryAddresses = String.join(",", inventories.stream().map(p -> "127.0.0.1:" + p.grpcPort).toList());
    orderEnv.putAll(serviceEnv);
    orderEnv.put("INVENTORY_ADDRESSES", inventoryAddresses);
    orderEnv.put("ORDER_STEP_GRACE_SECONDS", Integer.toString(GRACE_SECONDS));
    orderEnv.put("ORDER_RECOVERY_SECONDS", "1");
    orderEnv.put("INVENTORY_CIRCUIT_OPEN_SECONDS", Integer.toString(CIRCUIT_OPEN_SECONDS));
    for (int i = 0; i < INSTANCES; i++) {
      orders.add(StackProcess.service("rounds-order-" + i, ORDER_JAR, StackProcess.freePort(), StackProcess.freePort(),
          orderEnv).startAndAwaitPort());
    }
    gateway = StackProcess.service("rounds-gateway", GATEWAY_JAR, StackProcess.freePort(), StackProcess.freePort(), Map.of(
        "AUTH_MODE", "none",
        "INVENTORY_ADDRESSES", inventoryAddresses,
        "ORDER_ADDRESSES", String.join(",", orders.stream().map(p -> "127.0.0.1:" + p.grpcPort).toList()),
        "CIRCUIT_OPEN_SECONDS", Integer.toString(CIRCUIT_OPEN_SECONDS))).startAndAwaitPort();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort).usePlaintext().build();
    reservationChannel = NettyChannelBuilder.forAddress("127.0.0.1", inventories.get(0).grpcPort).usePlaintext().build();

    // Orders end to end before any fault, over every instance, until a batch places every order in time: the first
    // round's calls are then no cold JVM's. A cold stack sharing the cores with another process test can miss the
    // buyers' deadline and the grace, and the recovery then rightly abandons the order: that batch only warmed.
    long warmStart = System.nanoTime();
    List<String> cold = new ArrayList<>();
    for (int batch = 0; ; batch++) {
      List<Buyer> warmUp = warmUpBatch();
      List<Buyer> unplaced = warmUp.stream().filter(buyer -> !(buyer.answer instanceof Order)).toList();
      if (unplaced.isEmpty()) {
        break;
      }
      unplaced.forEach(buyer -> cold.add(buyer.history(warmStart)));
      assertThat(batch + 1).as("warm-up batches, each with an order not placed: %s", cold).isLessThan(WARM_UP_BATCHES);
    }
  }

  /** One batch of warm-up orders, at once, for as many units as there are orders; each buyer's last answer. */
  private static List<Buyer> warmUpBatch() throws Exception {
    String product = "P-warm-" + UUID.randomUUID().toString().substring(0, 8);
    stock(product, WARM_UP_ORDERS);
    ExecutorService pool = Executors.newFixedThreadPool(WARM_UP_ORDERS);
    try {
      List<Future<Buyer>> warmUp = new ArrayList<>();
      for (int i = 0; i < WARM_UP_ORDERS; i++) {
        Buyer buyer = new Buyer(request(product, "C-warm-" + i));
        warmUp.add(pool.submit(() -> {
          buyer.buy();
          return buyer;
        }));
      }
      List<Buyer> answered = new ArrayList<>();
      for (Future<Buyer> each : warmUp) {
        answered.add(each.get(GIVE_UP.toSeconds() + 60, TimeUnit.SECONDS));
      }
      return answered;
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Puts {@code units} of {@code product} on hand, asked again while the answer leaves it open: an injected
   * TransactionConflict can outlast the inventory's own rounds (ABORTED), and setting a quantity is safe to repeat.
   */
  private static void stock(String product, long units) {
    Awaitility.await("stock of " + product).atMost(Duration.ofSeconds(30)).pollInterval(RETRY_PAUSE)
        .ignoreExceptionsMatching(e -> e instanceof StatusRuntimeException s && Buyer.OPEN.contains(s.getStatus().getCode()))
        .until(() -> inventoryStub().putProductInventory(PutProductInventoryRequest.newBuilder()
            .setInventory(ProductInventory.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(units))
            .build()).getQuantity() == units);
  }

  private static PlaceOrderRequest request(String product, String customer) {
    return PlaceOrderRequest.newBuilder().setCustomerId(customer)
        .setOrderId("O-" + UUID.randomUUID()).setRequestId("r-" + UUID.randomUUID())
        .addLines(OrderLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)
            .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(99)))
        .build();
  }

  @AfterAll
  static void stop() throws Exception {
    for (ManagedChannel each : new ManagedChannel[] {channel, reservationChannel}) {
      if (each != null) {
        each.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    List<StackProcess> all = new ArrayList<>(orders);
    all.addAll(inventories);
    all.add(gateway);
    for (StackProcess process : all) {
      if (process != null) {
        process.kill(); // SIGKILL ends a frozen process too
      }
    }
    StrictMoto.reset(table);
  }

  @Test
  void everyPlacedOrderHoldsItsStock_andNoKillCostsASale_overManyRounds() throws Exception {
    List<Fault> kinds = kinds();
    Map<Fault, List<Round>> rounds = new EnumMap<>(Fault.class);
    SoftAssertions softly = new SoftAssertions();
    for (int i = 0; i < ROUNDS_PER_KIND * kinds.size(); i++) {
      Fault fault = kinds.get(i % kinds.size());
      Round round = round(i, fault, softly);
      rounds.computeIfAbsent(fault, f -> new ArrayList<>()).add(round);
      System.out.println(round.describe());
    }
    System.out.println(summary(rounds));

    for (Map.Entry<Fault, List<Round>> kind : rounds.entrySet()) {
      for (Round round : kind.getValue()) {
        // Down for less than the grace (with room for the buyers' arrival and one retry): a buyer who asks again
        // after the restart gets its order placed, so none is refused while units were there, nor given up on.
        if (kind.getKey().kill() && round.downtime().plus(SHORT_OUTAGE_MARGIN).compareTo(Duration.ofSeconds(GRACE_SECONDS)) < 0) {
          softly.assertThat(round.refusedWhileAvailable).as("round %d (%s, down %s): buyers refused while stock was"
              + " available", round.number, round.fault, round.downtime()).isZero();
          softly.assertThat(round.gaveUpOn).as("round %d (%s, down %s): buyers given up on past the grace",
              round.number, round.fault, round.downtime()).isZero();
        }
      }
    }
    try (DynamoDbAsyncClient dynamo = TestServices.dynamo(table)) {
      AuditReport inventoryAudit = new InventoryAudit(new PacedScan(dynamo, table, "inventory-audit",
          new PacedScan.Options(2, 1000)), LowStockShards.DECLARED).audit();
      AuditReport orderAudit = new OrderAudit(new PacedScan(dynamo, table, "order-audit",
          new PacedScan.Options(2, 1000)), Clock.systemUTC(), Duration.ofSeconds(1)).audit();
      softly.assertThat(inventoryAudit.findings()).as("inventory audit").isEmpty();
      softly.assertThat(orderAudit.findings()).as("order audit").isEmpty();
    }
    softly.assertAll();
  }

  /** One round: the race under {@code fault}, then what it left, checked into {@code softly}. */
  private Round round(int number, Fault fault, SoftAssertions softly) throws Exception {
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    stock(product, UNITS);

    List<Buyer> buyers = new ArrayList<>();
    for (int i = 0; i < BUYERS; i++) {
      buyers.add(new Buyer(request(product, "C-rounds-" + i)));
    }
    ExecutorService pool = Executors.newFixedThreadPool(BUYERS + 1);
    long started = System.nanoTime();
    Instant startedAt = Instant.now();
    long[] faultWindow = new long[2];
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> running = new ArrayList<>();
      for (Buyer buyer : buyers) {
        running.add(pool.submit(() -> {
          go.await();
          Thread.sleep(random.nextInt(1500)); // buyers arrive over a second and a half
          buyer.buy();
          return null;
        }));
      }
      Future<?> faulting = pool.submit(() -> {
        go.await();
        Thread.sleep(random.nextInt(1500)); // the fault lands at a random moment of the race: a schedule, not a wait
        faultWindow[0] = System.nanoTime();
        inflict(fault, random.nextInt(INSTANCES));
        faultWindow[1] = System.nanoTime();
        return null;
      });
      go.countDown();
      faulting.get(120, TimeUnit.SECONDS);
      for (Future<?> buyer : running) {
        buyer.get(GIVE_UP.toSeconds() + 60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    // The recovery finishes whatever the fault left owing a step.
    Awaitility.await("round " + number + ": no order PENDING, none owing a step").atMost(SETTLE)
        .pollInterval(Duration.ofMillis(250))
        .until(() -> settled(buyers));
    long settledAt = System.nanoTime();

    Round round = new Round(number, fault, buyers, started, faultWindow[0], faultWindow[1], settledAt);
    String as = "round " + number + " (" + fault + ")";
    for (Buyer buyer : buyers) {
      Order stored = order(buyer.request);
      OrderStatus status = stored.getStatus();
      Reservation reservation = reservation(buyer.request);
      buyer.stored = stored(stored, reservation, startedAt);
      // A tombstone laid before the order was due: no recovery did it, but the placing's own out-of-stock
      // rejection, whose REJECTED write the fault cut off; the next ask then read it as ABANDONED.
      buyer.fencedBeforeDue = reservation != null && reservation.getReleaseCause() == ReleaseCause.RELEASE_CAUSE_BEFORE_RESERVE
          && instant(reservation.getUpdateTime()).isBefore(instant(stored.getCreateTime()).plusSeconds(GRACE_SECONDS));
      String who = as + ": buyer of " + buyer.request.getOrderId() + " " + buyer.history(started);
      softly.assertThat(buyer.answer).as(who + " was answered (PLACED, or refused for good)")
          .matches(a -> a instanceof Order || a instanceof StatusRuntimeException e
              && e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION);
      if (buyer.answer instanceof Order placed) {
        softly.assertThat(placed.getStatus()).as(who).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
        softly.assertThat(status).as(who + ": the stored order").isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
      } else if (buyer.refused()) {
        softly.assertThat(status).as(who + ": the stored order").isEqualTo(OrderStatus.ORDER_STATUS_REJECTED);
      }
      // A PLACED order's units are held for it, confirmed; a REJECTED one's reservation is released.
      softly.assertThat(reservation == null ? null : reservation.getState()).as(who + ": its reservation, the order " + status)
          .isEqualTo(status == OrderStatus.ORDER_STATUS_PLACED ? ReservationState.RESERVATION_STATE_CONFIRMED
              : ReservationState.RESERVATION_STATE_RELEASED);
      if (status == OrderStatus.ORDER_STATUS_PLACED) {
        round.placed++;
      }
    }
    ProductInventory stock = inventoryStub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(product).setWarehouseId("W1").setConsistentRead(true).build());
    softly.assertThat(round.placed).as(as + ": orders placed").isLessThanOrEqualTo(UNITS);
    softly.assertThat(stock.getQuantity()).as(as + ": quantity").isEqualTo(UNITS);
    softly.assertThat(stock.getReserved()).as(as + ": reserved, the PLACED orders' units").isEqualTo(round.placed);
    softly.assertThat(stock.getAvailable()).as(as + ": available").isEqualTo(UNITS - round.placed);
    round.count();
    return round;
  }

  /** Inflicts {@code fault} on instance {@code index} of its service; returns once the instance serves again. */
  private static void inflict(Fault fault, int index) throws Exception {
    switch (fault) {
      case KILL_INVENTORY -> killAndRestart(inventories, index, INVENTORY_JAR, serviceEnv);
      case KILL_ORDER -> killAndRestart(orders, index, ORDER_JAR, orderEnv);
      case KILL_BOTH -> {
        inventories.get(index).kill();
        killAndRestart(orders, index, ORDER_JAR, orderEnv);
        killAndRestart(inventories, index, INVENTORY_JAR, serviceEnv);
      }
      case FREEZE_INVENTORY -> freezeAndThaw(inventories.get(index));
      case FREEZE_ORDER -> freezeAndThaw(orders.get(index));
    }
  }

  /** SIGKILL, then the instance started again on its ports, as a restarted pod would be. */
  private static void killAndRestart(List<StackProcess> list, int index, String jar, Map<String, String> env)
      throws Exception {
    StackProcess dead = list.get(index);
    dead.kill();
    list.set(index, StackProcess.service(dead.name.replaceFirst("-r\\d+$", "") + "-r" + ++starts, jar, dead.grpcPort,
        dead.metricsPort, env).startAndAwaitPort());
  }

  private static void freezeAndThaw(StackProcess process) throws Exception {
    process.freeze();
    try {
      Thread.sleep(FREEZE.toMillis()); // how long the fault lasts, not a wait for a result
    } finally {
      process.thaw();
    }
  }

  /** Whether every order of the round is decided and no order of the stack owes a step; a failing read is a no. */
  private static boolean settled(List<Buyer> buyers) {
    try {
      return buyers.stream().noneMatch(b -> status(b.request) == OrderStatus.ORDER_STATUS_PENDING)
          && orderStub().listStalledOrders(ListStalledOrdersRequest.getDefaultInstance()).getOrdersList().isEmpty();
    } catch (StatusRuntimeException e) {
      Status.Code code = e.getStatus().getCode();
      if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
        return false;
      }
      throw e;
    }
  }

  /** The kinds to run: {@code rounds.kinds}, or all. */
  private static List<Fault> kinds() {
    String named = System.getProperty("rounds.kinds", "");
    return named.isBlank() ? List.of(Fault.values())
        : Arrays.stream(named.split(",")).map(String::trim).map(Fault::valueOf).toList();
  }

  /** A careful client's order: one request, asked again with the same request_id until it is decided. */
  private static final class Buyer {
    /** The codes that leave the outcome open: the client may only ask again. */
    private static final Set<Status.Code> OPEN = Set.of(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED,
        Status.Code.ABORTED, Status.Code.RESOURCE_EXHAUSTED, Status.Code.CANCELLED, Status.Code.UNKNOWN);

    final PlaceOrderRequest request;
    /** Each answer, with when it came (ns of the round's clock), for the report of a refused buyer. */
    final List<Map.Entry<Long, String>> answers = new CopyOnWriteArrayList<>();
    volatile Object answer;
    volatile long answeredAt;
    /** The order and its reservation as stored once the round settled. */
    String stored = "";
    /** Whether its reservation was fenced before the order was due, by the placing itself, not the recovery. */
    boolean fencedBeforeDue;

    Buyer(PlaceOrderRequest request) {
      this.request = request;
    }

    void buy() throws InterruptedException {
      long giveUp = System.nanoTime() + GIVE_UP.toNanos();
      answers.add(Map.entry(System.nanoTime(), "first ask"));
      while (true) {
        try {
          answer = OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS)
              .placeOrder(request);
          answeredAt = System.nanoTime();
          answers.add(Map.entry(answeredAt, "PLACED"));
          return;
        } catch (StatusRuntimeException e) {
          answer = e;
          answeredAt = System.nanoTime();
          answers.add(Map.entry(answeredAt, describe(e)));
          if (!OPEN.contains(e.getStatus().getCode()) || System.nanoTime() > giveUp) {
            return;
          }
          // A client's pause before it asks again (RetryInfo's delay when it names one), not a wait for the test.
          Thread.sleep(e.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED ? Statuses.retryDelayMs(e)
              : RETRY_PAUSE.toMillis());
        }
      }
    }

    /** Refused for good: the order was not placed, and asking again answers the same. */
    boolean refused() {
      return answer instanceof StatusRuntimeException e && e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION;
    }

    /** The refusal's reason (OUT_OF_STOCK, ABANDONED, HOLD_EXPIRED ...), or "" when not refused. */
    String refusal() {
      return refused() ? reason((StatusRuntimeException) answer) : "";
    }

    /** Its answers over time, the same answers in a row folded: "+0.31s first ask, +0.52s UNAVAILABLE ×3, ...". */
    String history(long started) {
      StringBuilder out = new StringBuilder();
      String last = null;
      int repeats = 0;
      for (Map.Entry<Long, String> each : answers) {
        if (each.getValue().equals(last)) {
          repeats++;
          continue;
        }
        if (repeats > 0) {
          out.append(" x").append(repeats + 1);
        }
        out.append(out.length() == 0 ? "" : ", ").append(seconds(each.getKey() - started)).append(' ')
            .append(each.getValue());
        last = each.getValue();
        repeats = 0;
      }
      if (repeats > 0) {
        out.append(" x").append(repeats + 1);
      }
      return "[" + out + "]";
    }
  }

  /** What one round gave. */
  private static final class Round {
    final int number;
    final Fault fault;
    final List<Buyer> buyers;
    final long started;
    final long faultFrom;
    final long faultUntil;
    final long settledAt;
    int placed;
    int refused;
    int refusedWhileAvailable;
    /**
     * Refused because the recovery gave up on the order past its grace (ABANDONED, HOLD_EXPIRED), whatever the
     * others got: a sale lost had the units been there.
     */
    int gaveUpOn;
    /** Refused ABANDONED, though the placing had found the units all held by others (see fencedBeforeDue). */
    int outOfStockAsAbandoned;

    Round(int number, Fault fault, List<Buyer> buyers, long started, long faultFrom, long faultUntil, long settledAt) {
      this.number = number;
      this.fault = fault;
      this.buyers = buyers;
      this.started = started;
      this.faultFrom = faultFrom;
      this.faultUntil = faultUntil;
      this.settledAt = settledAt;
    }

    void count() {
      for (Buyer buyer : buyers) {
        if (buyer.refused()) {
          refused++;
          // With all the units sold to others, an OUT_OF_STOCK is the truth; with fewer, a sale was lost.
          refusedWhileAvailable += placed < UNITS ? 1 : 0;
          if (!buyer.refusal().equals("OUT_OF_STOCK")) {
            if (buyer.fencedBeforeDue) {
              outOfStockAsAbandoned++;
            } else {
              gaveUpOn++;
            }
          }
        }
      }
    }

    /** How long the faulted instance was away: killed until it served again, or frozen until thawed. */
    Duration downtime() {
      return Duration.ofNanos(faultUntil - faultFrom);
    }

    /** From the fault's start until the last order of the round was decided and nothing owed a step. */
    Duration recovery() {
      long decided = Math.max(settledAt, buyers.stream().mapToLong(b -> b.answeredAt).max().orElse(settledAt));
      return Duration.ofNanos(decided - faultFrom);
    }

    String describe() {
      StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
          "round %d %s: fault %s..%s, placed %d, refused %d (while available %d, given up on past the grace %d,"
              + " out of stock answered ABANDONED %d), settled %s after the fault",
          number, fault, seconds(faultFrom - started), seconds(faultUntil - started), placed, refused,
          refusedWhileAvailable, gaveUpOn, outOfStockAsAbandoned, seconds(recovery().toNanos())));
      for (Buyer buyer : buyers) {
        boolean lost = buyer.refused() && (placed < UNITS || !buyer.refusal().equals("OUT_OF_STOCK"));
        if (lost || !(buyer.answer instanceof Order) && !buyer.refused()) {
          out.append("\n  ").append(buyer.request.getOrderId()).append(' ').append(buyer.history(started))
              .append(" stored: ").append(buyer.stored);
        }
      }
      return out.toString();
    }
  }

  /** The table per kind: rounds, orders placed, refusals, and the longest recovery. */
  private static String summary(Map<Fault, List<Round>> rounds) {
    StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
        "%nStockRoundsIT: %d buyers for %d units per round, step grace %d s, freeze %d s, circuits open %d s, %d instances of each service%n"
            + "%-16s %6s %7s %8s %17s %13s %16s %13s%n",
        BUYERS, UNITS, GRACE_SECONDS, FREEZE.toSeconds(), CIRCUIT_OPEN_SECONDS, INSTANCES,
        "kind", "rounds", "placed", "refused", "refused-available", "given-up-on", "oos-as-abandoned", "max-recovery"));
    for (Map.Entry<Fault, List<Round>> kind : rounds.entrySet()) {
      List<Round> each = kind.getValue();
      out.append(String.format(Locale.ROOT, "%-16s %6d %7d %8d %17d %13d %16d %13s%n", kind.getKey(), each.size(),
          each.stream().mapToInt(r -> r.placed).sum(), each.stream().mapToInt(r -> r.refused).sum(),
          each.stream().mapToInt(r -> r.refusedWhileAvailable).sum(), each.stream().mapToInt(r -> r.gaveUpOn).sum(),
          each.stream().mapToInt(r -> r.outOfStockAsAbandoned).sum(),
          seconds(each.stream().mapToLong(r -> r.recovery().toNanos()).max().orElse(0))));
    }
    return out.toString();
  }

  private static String describe(StatusRuntimeException e) {
    String reason = reason(e);
    return e.getStatus().getCode() + (reason.isEmpty() ? "" : "(" + reason + ")");
  }

  /** The ErrorInfo reason of a failure, or "" when it names none. */
  private static String reason(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    if (status == null) {
      return "";
    }
    return status.getDetailsList().stream().filter(any -> any.is(ErrorInfo.class)).findFirst().map(any -> {
      try {
        return any.unpack(ErrorInfo.class).getReason();
      } catch (com.google.protobuf.InvalidProtocolBufferException x) {
        return "?";
      }
    }).orElse("");
  }

  private static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%+.2fs", nanos / 1e9);
  }

  private static OrderServiceGrpc.OrderServiceBlockingStub orderStub() {
    return OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static InventoryServiceGrpc.InventoryServiceBlockingStub inventoryStub() {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static OrderStatus status(PlaceOrderRequest request) {
    return order(request).getStatus();
  }

  private static Order order(PlaceOrderRequest request) {
    return orderStub().getOrder(GetOrderRequest.newBuilder().setOrderId(request.getOrderId()).setConsistentRead(true)
        .build());
  }

  /**
   * What the table says of a decided order, times from the round's start: the order's status and rejection
   * reason, and its reservation's state, release cause (BEFORE_RESERVE: a fence that found nothing held) and
   * last change; so a report shows who decided a refusal, and when.
   */
  private static String stored(Order order, Reservation reservation, Instant startedAt) {
    String reservationPart = reservation == null ? "no reservation" : reservation.getState().name()
        .replace("RESERVATION_STATE_", "") + (reservation.getReleaseCause().getNumber() == 0 ? ""
        : "/" + reservation.getReleaseCause().name().replace("RELEASE_CAUSE_", "")) + " at "
        + seconds(Duration.between(startedAt, instant(reservation.getUpdateTime())).toNanos());
    return order.getStatus().name().replace("ORDER_STATUS_", "")
        + (order.getRejectionReason().isEmpty() ? "" : "(" + order.getRejectionReason() + ")")
        + " created " + seconds(Duration.between(startedAt, instant(order.getCreateTime())).toNanos())
        + ", decided " + seconds(Duration.between(startedAt, instant(order.getUpdateTime())).toNanos())
        + "; reservation " + reservationPart;
  }

  private static Instant instant(com.google.protobuf.Timestamp t) {
    return Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
  }

  /** The order's reservation, read strongly; null when it has none. */
  private static Reservation reservation(PlaceOrderRequest request) {
    try {
      return ReservationServiceGrpc.newBlockingStub(reservationChannel).withWaitForReady()
          .withDeadlineAfter(10, TimeUnit.SECONDS)
          .getReservation(GetReservationRequest.newBuilder().setOrderId(request.getOrderId()).setConsistentRead(true)
              .build());
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
        return null;
      }
      throw e;
    }
  }
}
