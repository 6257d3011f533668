package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.type.Money;
import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.inventory.v1.ReservationState;
import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.store.OrderKeys;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListStalledOrdersRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.runtime.testing.DynamoFaultProxy.Phase;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.runtime.testing.TestServices;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A crash at each named point of placing an order leaves no order half-placed and no stock astray. The
 * order-service is killed (SIGKILL) right after the inventory applied its reserve transaction, and after
 * the inventory confirmed the hold but before the order's own PLACED write; the inventory-service is
 * killed mid-reserve, before its reserve transaction is applied and after it is applied but before it
 * answers. Both services run as jars, each reaching moto through its own {@link DynamoFaultProxy} in
 * this JVM, whose hook fires the kill on the one DynamoDB request that marks the point; the killed
 * process is started again on its ports. After one recovery interval the order is PLACED or REJECTED
 * (as the point decides), nothing owes a step, a replay of its PlaceOrder answers what is stored, a new
 * order is placed, the product's reserved units are exactly those of its PLACED orders, and both audits
 * are clean. On the strict launcher, without injected conflicts, so that each kill lands where it is aimed.
 */
class StockCrashIT {

  private static final String INVENTORY_JAR = "inventory-service/target/inventory-service.jar";
  private static final String ORDER_JAR = "order-service/target/order-service.jar";
  private static final long STOCK = 10;
  private static final long UNITS = 3;

  /**
   * The inventory's reserve transaction (W6): the only write that puts a HELD reservation whole, so the
   * only one with that state as an item attribute. A confirm or a release sets the state through
   * {@code #st} with values such as {@code :held}; a release's tombstone is put RELEASED.
   */
  private static final String RESERVE_TRANSACTION = "\"state\":{\"S\":\"HELD\"}";
  /**
   * The order-service's write that ends a placing PLACED (both copies at once): creating an order writes
   * PENDING, a rejection REJECTED, and no status change moves an order to PLACED.
   */
  private static final String PLACED_WRITE = "{\"S\":\"PLACED\"}";

  /** The recovery takes a PENDING order over 2 s after it was written, and looks every second. */
  private static final int GRACE_SECONDS = 2;
  private static final int RECOVERY_SECONDS = 1;
  private static final Duration CALL = Duration.ofSeconds(10);
  /** Far above a restart, the grace and a recovery round (5 to 10 s together, on a busy machine). */
  private static final Duration SETTLE = Duration.ofSeconds(30);

  private static final String table = "crash-" + UUID.randomUUID();
  private static final Map<String, String> inventoryEnv = new HashMap<>();
  private static final Map<String, String> orderEnv = new HashMap<>();
  private static final AtomicInteger starts = new AtomicInteger();
  private static DynamoFaultProxy inventoryDynamo;
  private static DynamoFaultProxy orderDynamo;
  private static volatile StackProcess inventory;
  private static volatile StackProcess orders;
  private static ManagedChannel inventoryChannel;
  private static ManagedChannel orderChannel;
  private static DynamoDbAsyncClient dynamo;
  private static ExecutorService callers;

  /** The process a case kills. */
  private enum Victim { INVENTORY, ORDER }

  @BeforeAll
  static void start() throws Exception {
    StrictMoto.table(table).conflictRate(0).apply();
    dynamo = TestServices.dynamo(table); // creates the table, so neither service waits on the other's creation
    inventoryDynamo = DynamoFaultProxy.start(MotoServer.endpoint());
    orderDynamo = DynamoFaultProxy.start(MotoServer.endpoint());
    callers = Executors.newCachedThreadPool();
    // The serialized moto can take seconds to answer on a busy machine, longer than the 3 s default allows.
    Map<String, String> common = Map.of("TABLE_NAME", table, "TABLE_AUTO_CREATE", "true", "SHUTDOWN_DRAIN_MS", "0",
        "SHUTDOWN_GRACE_SECONDS", "2", "DYNAMODB_CALL_TIMEOUT_MS", "10000");
    int inventoryPort = StackProcess.freePort();
    inventoryEnv.putAll(common);
    inventoryEnv.put("DYNAMODB_ENDPOINT", inventoryDynamo.endpoint().toString());
    // A hold outlives a restart plus the grace (as 60 s outlive 30 s in production), so the recovery
    // finds a held order still held; the sweep looks every second all the same.
    inventoryEnv.put("RESERVATION_HOLD_SECONDS", "20");
    inventoryEnv.put("RESERVATION_SWEEP_SECONDS", "1");
    orderEnv.putAll(common);
    orderEnv.put("DYNAMODB_ENDPOINT", orderDynamo.endpoint().toString());
    orderEnv.put("INVENTORY_ADDRESSES", "127.0.0.1:" + inventoryPort);
    orderEnv.put("ORDER_STEP_GRACE_SECONDS", Integer.toString(GRACE_SECONDS));
    orderEnv.put("ORDER_RECOVERY_SECONDS", Integer.toString(RECOVERY_SECONDS));
    orderEnv.put("INVENTORY_CIRCUIT_OPEN_SECONDS", "1");
    // Both at once: each takes seconds to start, and the order-service needs the inventory only per call.
    Future<StackProcess> startingInventory = callers.submit(() -> StackProcess.service(name("inventory"), INVENTORY_JAR,
        inventoryPort, StackProcess.freePort(), inventoryEnv).startAndAwaitPort());
    Future<StackProcess> startingOrders = callers.submit(() -> StackProcess.service(name("order"), ORDER_JAR,
        StackProcess.freePort(), StackProcess.freePort(), orderEnv).startAndAwaitPort());
    inventory = startingInventory.get(90, TimeUnit.SECONDS);
    orders = startingOrders.get(90, TimeUnit.SECONDS);
    inventoryChannel = NettyChannelBuilder.forAddress("127.0.0.1", inventory.grpcPort).usePlaintext().build();
    orderChannel = NettyChannelBuilder.forAddress("127.0.0.1", orders.grpcPort).usePlaintext().build();

    // One order end to end before any kill: the stack works, and no case's call is a cold JVM's, slow
    // enough that the recovery (after the 2 s grace) takes its order over before the kill's point.
    Object warmUp = place(order(stockedProduct()), CALL);
    assertThat(warmUp).as("an order before any kill").isInstanceOf(Order.class);
    assertThat(((Order) warmUp).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
  }

  @AfterEach
  void disarm() throws Exception {
    inventoryDynamo.clear();
    orderDynamo.clear();
    // A case that failed between its kill and its restart leaves the stack whole for the next one.
    if (!inventory.isAlive()) {
      restart(Victim.INVENTORY);
    }
    if (!orders.isAlive()) {
      restart(Victim.ORDER);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (callers != null) {
      callers.shutdownNow();
    }
    for (ManagedChannel channel : new ManagedChannel[] {orderChannel, inventoryChannel}) {
      if (channel != null) {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    for (StackProcess process : new StackProcess[] {orders, inventory}) {
      if (process != null) {
        process.kill();
      }
    }
    for (DynamoFaultProxy proxy : new DynamoFaultProxy[] {orderDynamo, inventoryDynamo}) {
      if (proxy != null) {
        proxy.close();
      }
    }
    if (dynamo != null) {
      dynamo.close();
    }
    StrictMoto.reset(table);
  }

  @Test
  void orderServiceKilledRightAfterTheInventoryAppliedTheReserve_placesTheOrderOnItsHeldStock() throws Exception {
    String product = stockedProduct();
    PlaceOrderRequest request = order(product);

    Future<Object> call = placeAndKill(request, inventoryDynamo, RESERVE_TRANSACTION, Phase.AFTER_APPLIED,
        Victim.ORDER);
    assertCutOff(call);
    assertStored(request, "PENDING", "HELD");
    restart(Victim.ORDER);

    assertSettles(request, product, OrderStatus.ORDER_STATUS_PLACED);
  }

  @Test
  void orderServiceKilledAfterTheConfirmBeforeItsPlacedWrite_placesTheOrder() throws Exception {
    String product = stockedProduct();
    PlaceOrderRequest request = order(product);

    Future<Object> call = placeAndKill(request, orderDynamo, PLACED_WRITE, Phase.BEFORE_FORWARD, Victim.ORDER);
    assertCutOff(call);
    assertStored(request, "PENDING", "CONFIRMED");
    restart(Victim.ORDER);

    assertSettles(request, product, OrderStatus.ORDER_STATUS_PLACED);
  }

  @Test
  void inventoryKilledBeforeItsReserveIsApplied_rejectsTheOrderAndHoldsNothing() throws Exception {
    String product = stockedProduct();
    PlaceOrderRequest request = order(product);

    Future<Object> call = placeAndKill(request, inventoryDynamo, RESERVE_TRANSACTION, Phase.BEFORE_FORWARD,
        Victim.INVENTORY);
    assertCutOff(call);
    assertStored(request, "PENDING", null);
    restart(Victim.INVENTORY);

    assertSettles(request, product, OrderStatus.ORDER_STATUS_REJECTED);
  }

  @Test
  void inventoryKilledAfterItsReserveIsAppliedBeforeItAnswers_placesTheOrderOnItsHeldStock() throws Exception {
    String product = stockedProduct();
    PlaceOrderRequest request = order(product);

    Future<Object> call = placeAndKill(request, inventoryDynamo, RESERVE_TRANSACTION, Phase.AFTER_APPLIED,
        Victim.INVENTORY);
    assertCutOff(call);
    assertStored(request, "PENDING", "HELD");
    restart(Victim.INVENTORY);

    assertSettles(request, product, OrderStatus.ORDER_STATUS_PLACED);
  }

  /**
   * Arms {@code proxy} to kill {@code victim} on the request holding {@code marker}, at {@code phase}, places
   * {@code request} and waits until the kill has happened; returns the call's outcome to come. When the
   * inventory is killed, the client then gives up on the call (cancels it), as at its deadline: the
   * order-service, alive, would otherwise wait for the inventory to come back and end the placing itself,
   * and the recovery has to.
   */
  private static Future<Object> placeAndKill(PlaceOrderRequest request, DynamoFaultProxy proxy, String marker,
      Phase phase, Victim victim) throws Exception {
    CountDownLatch killed = new CountDownLatch(1);
    proxy.whenSeen("TransactWriteItems", marker, phase, () -> {
      kill(victim);
      killed.countDown();
    }, 1);
    Context.CancellableContext client = Context.current().withCancellation();
    Future<Object> call = callers.submit(() -> client.call(() -> place(request, CALL)));
    assertThat(killed.await(SETTLE.toSeconds(), TimeUnit.SECONDS))
        .as("the %s was killed at the request holding %s", victim, marker).isTrue();
    if (victim == Victim.INVENTORY) {
      client.cancel(null);
    }
    return call;
  }

  /** The killed call's answer leaves its outcome open: the client may only ask again. */
  private static void assertCutOff(Future<Object> call) throws Exception {
    Object answer = call.get(SETTLE.toSeconds(), TimeUnit.SECONDS);
    assertThat(answer).as("PlaceOrder's answer across the kill").isInstanceOf(StatusRuntimeException.class);
    assertThat(((StatusRuntimeException) answer).getStatus().getCode()).as(String.valueOf(answer))
        .isIn(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED);
  }

  /** What the table holds at the kill (read behind the services' backs): the point the kill landed on. */
  private static void assertStored(PlaceOrderRequest request, String orderStatus, String reservationState)
      throws Exception {
    assertThat(attribute(OrderKeys.direct(request.getOrderId()), "status")).as("order at the kill")
        .isEqualTo(orderStatus);
    assertThat(attribute(InventoryKeys.reservation(request.getOrderId()), "state")).as("reservation at the kill")
        .isEqualTo(reservationState);
  }

  /**
   * Waits for the recovery to end the order (never asking PlaceOrder again before, which would end it
   * itself), then checks it ended {@code expected}, that a replay answers the same, that the stack
   * places a new order, and that the stock adds up.
   */
  private static void assertSettles(PlaceOrderRequest request, String product, OrderStatus expected) throws Exception {
    Awaitility.await("order " + request.getOrderId() + " settled").atMost(SETTLE).pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(unsettled(request)).as("what is still open").isNull());
    assertThat(status(request)).as("order %s after the recovery", request.getOrderId()).isEqualTo(expected);

    // A careful client asks again with the same request_id: the answer is the stored outcome.
    Object replay = place(request, CALL);
    if (expected == OrderStatus.ORDER_STATUS_PLACED) {
      assertThat(replay).as("replay of a placed order").isInstanceOf(Order.class);
      assertThat(((Order) replay).getOrderId()).isEqualTo(request.getOrderId());
      assertThat(((Order) replay).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
    } else {
      assertThat(replay).as("replay of a rejected order").isInstanceOf(StatusRuntimeException.class);
      assertThat(((StatusRuntimeException) replay).getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    }

    // The restarted stack places the next order straight away.
    PlaceOrderRequest next = order(product);
    Object placed = place(next, CALL);
    assertThat(placed).as("a new order after the restart").isInstanceOf(Order.class);
    assertThat(((Order) placed).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);

    // A PLACED order's stock is held, confirmed; a REJECTED one's reservation is released (a tombstone
    // when nothing was held, so a late ReserveStock cannot hold stock for it).
    long held = 0;
    for (PlaceOrderRequest each : List.of(request, next)) {
      boolean placedOrder = status(each) == OrderStatus.ORDER_STATUS_PLACED;
      held += placedOrder ? UNITS : 0;
      assertThat(reservation(each)).as("reservation of order %s", each.getOrderId()).isEqualTo(placedOrder
          ? ReservationState.RESERVATION_STATE_CONFIRMED : ReservationState.RESERVATION_STATE_RELEASED);
    }
    ProductInventory stock = InventoryServiceGrpc.newBlockingStub(inventoryChannel).withWaitForReady()
        .withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS)
        .getProductInventory(GetProductInventoryRequest.newBuilder().setProductId(product).setWarehouseId("W1")
            .setConsistentRead(true).build());
    assertThat(stock.getQuantity()).as("quantity on hand").isEqualTo(STOCK);
    assertThat(stock.getReserved()).as("reserved: the units of the PLACED orders").isEqualTo(held);
    assertThat(stock.getAvailable()).as("available").isEqualTo(STOCK - held);

    AuditReport inventoryAudit = new InventoryAudit(new PacedScan(dynamo, table, "inventory-audit",
        new PacedScan.Options(2, 1000)), LowStockShards.DECLARED).audit();
    AuditReport orderAudit = new OrderAudit(new PacedScan(dynamo, table, "order-audit", new PacedScan.Options(2, 1000)),
        Clock.systemUTC(), Duration.ofSeconds(RECOVERY_SECONDS)).audit();
    assertThat(inventoryAudit.findings()).as("inventory audit").isEmpty();
    assertThat(orderAudit.findings()).as("order audit").isEmpty();
  }

  private static ReservationState reservation(PlaceOrderRequest request) {
    return ReservationServiceGrpc.newBlockingStub(inventoryChannel).withWaitForReady()
        .withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS)
        .getReservation(GetReservationRequest.newBuilder().setOrderId(request.getOrderId()).setConsistentRead(true)
            .build())
        .getState();
  }

  private static String stockedProduct() {
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    InventoryServiceGrpc.newBlockingStub(inventoryChannel).withWaitForReady()
        .withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS)
        .putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
            .setProductId(product).setWarehouseId("W1").setQuantity(STOCK)).build());
    return product;
  }

  private static PlaceOrderRequest order(String product) {
    return PlaceOrderRequest.newBuilder().setCustomerId("C-crash").setOrderId("O-" + UUID.randomUUID())
        .setRequestId("r-" + UUID.randomUUID())
        .addLines(OrderLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(UNITS)
            .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(99)))
        .build();
  }

  /** PlaceOrder's answer: the order, or the failure. */
  private static Object place(PlaceOrderRequest request, Duration deadline) {
    try {
      return OrderServiceGrpc.newBlockingStub(orderChannel).withWaitForReady()
          .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS).placeOrder(request);
    } catch (StatusRuntimeException e) {
      return e;
    }
  }

  private static OrderServiceGrpc.OrderServiceBlockingStub orderStub() {
    return OrderServiceGrpc.newBlockingStub(orderChannel).withWaitForReady()
        .withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Why the order is not settled yet (still PENDING, or some order's step owed), or null when it is. A read
   * the stack fails to answer in time (the serialized moto on a busy machine) counts as not yet.
   */
  private static String unsettled(PlaceOrderRequest request) {
    try {
      OrderStatus status = status(request);
      if (status == OrderStatus.ORDER_STATUS_PENDING) {
        return "the order is PENDING";
      }
      int stalled = orderStub().listStalledOrders(ListStalledOrdersRequest.getDefaultInstance()).getOrdersCount();
      return stalled == 0 ? null : stalled + " orders owe a step";
    } catch (StatusRuntimeException e) {
      Status.Code code = e.getStatus().getCode();
      if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
        return e.toString();
      }
      throw e;
    }
  }

  private static OrderStatus status(PlaceOrderRequest request) {
    return orderStub().getOrder(GetOrderRequest.newBuilder().setOrderId(request.getOrderId()).setConsistentRead(true)
        .build()).getStatus();
  }

  /** One string attribute of an item, read strongly from moto itself; null when there is no such item. */
  private static String attribute(TableKey key, String name) throws Exception {
    Map<String, AttributeValue> item = dynamo.getItem(b -> b.tableName(table).key(key.attributes())
        .consistentRead(true)).get(10, TimeUnit.SECONDS).item();
    return item == null || item.isEmpty() ? null : item.get(name).s();
  }

  /** SIGKILL, waiting until the process is gone; run by a proxy hook, on the thread that holds the request. */
  private static void kill(Victim victim) {
    try {
      (victim == Victim.ORDER ? orders : inventory).kill();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Starts the killed process again on its ports, as a restarted pod would be. */
  private static void restart(Victim victim) throws Exception {
    if (victim == Victim.ORDER) {
      orders = StackProcess.service(name("order"), ORDER_JAR, orders.grpcPort, orders.metricsPort, orderEnv)
          .startAndAwaitPort();
      orderChannel.resetConnectBackoff();
    } else {
      inventory = StackProcess.service(name("inventory"), INVENTORY_JAR, inventory.grpcPort, inventory.metricsPort,
          inventoryEnv).startAndAwaitPort();
      inventoryChannel.resetConnectBackoff();
    }
  }

  private static String name(String service) {
    return "crash-" + service + "-" + starts.getAndIncrement();
  }
}
