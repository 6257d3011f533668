package dev.warehouse.gateway;

import static dev.warehouse.testing.Statuses.assertInvalid;
import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.google.rpc.ErrorInfo;
import dev.warehouse.admin.v1.AccessPatternHotKeys;
import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.admin.v1.UnansweredInstance;
import dev.warehouse.devkit.DevTokens;
import dev.warehouse.devkit.LocalCa;
import dev.warehouse.gateway.auth.BearerToken;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ListLowStockRequest;
import dev.warehouse.inventory.v1.ListProductWarehousesRequest;
import dev.warehouse.inventory.v1.ListWarehouseProductsRequest;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.testing.LogLines;
import dev.warehouse.testing.MetricsScrape;
import dev.warehouse.testing.Reflection;
import dev.warehouse.testing.Statuses;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The whole stack as separate processes, started from the runnable jars: moto (through our
 * launcher), one inventory-service, two order-service instances and the gateway, with certificates
 * from the dev kit's {@code certs} command, as run.sh makes them. The gateway calls the services
 * over mutual TLS, and they admit only its identity; its own port is plaintext, as run.sh's. Clients
 * talk only to the gateway.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LocalStackIT {

  private static final String INVENTORY_JAR = "inventory-service/target/inventory-service.jar";
  private static final String ORDER_JAR = "order-service/target/order-service.jar";
  private static final String GATEWAY_JAR = "gateway/target/gateway.jar";
  private static final String DEV_KIT_JAR = "dev-kit/target/dev-kit.jar";

  private static StackProcess inventory;
  private static StackProcess orders1;
  private static StackProcess orders2;
  private static StackProcess gateway;
  private static ManagedChannel channel;
  private static Path certs;
  private static Map<String, String> inventoryEnv;
  private static PrometheusServer prometheus;
  /** Development credentials, as run.sh makes them: the gateway's JWKS and one token per role. */
  private static final java.nio.file.Path AUTH = StackProcess.ROOT.resolve("gateway/target/e2e-auth");
  private static final String POLICY = StackProcess.ROOT.resolve("deploy/auth/policy.dev.yaml").toString();

  @BeforeAll
  static void startStack() throws Exception {
    Files.createDirectories(StackProcess.ROOT.resolve("gateway/target"));
    certs = Files.createTempDirectory(StackProcess.ROOT.resolve("gateway/target"), "e2e-certs");
    String made = StackProcess.command("certs", DEV_KIT_JAR, List.of("certs", certs.toString()))
        .runToEnd(Duration.ofSeconds(60));
    assertThat(made).startsWith("exit=0").contains("ca=created");
    Map<String, String> serviceEnv = Map.of(
        "DYNAMODB_ENDPOINT", MotoServer.endpoint().toString(),
        "TABLE_NAME", "e2e-" + UUID.randomUUID(),
        "TABLE_AUTO_CREATE", "true",
        "PAGE_TOKEN_KEY", Base64.getEncoder().encodeToString("e2e-only-page-token-key-32-bytes".getBytes()),
        "SHUTDOWN_GRACE_SECONDS", "5");
    inventoryEnv = withTls(serviceEnv, "inventory-service", Map.of("GRPC_TLS_MODE", "mtls",
        "TLS_TRUSTED_PEERS", LocalCa.spiffeId("gateway")));
    inventory = StackProcess.service("inventory-service", INVENTORY_JAR, StackProcess.freePort(), StackProcess.freePort(),
        inventoryEnv).startAndAwaitPort();
    // The order-services call the inventory's reservations directly, over mutual TLS with their own identity.
    Map<String, String> orderEnv = withTls(serviceEnv, "order-service", Map.of("GRPC_TLS_MODE", "mtls",
        "TLS_TRUSTED_PEERS", LocalCa.spiffeId("gateway"),
        "INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort,
        "INVENTORY_TLS_MODE", "mtls",
        "INVENTORY_TRUSTED_PEERS", LocalCa.spiffeId("inventory-service")));
    orders1 = StackProcess.service("order-service-1", ORDER_JAR, StackProcess.freePort(), StackProcess.freePort(), orderEnv)
        .startAndAwaitPort();
    orders2 = StackProcess.service("order-service-2", ORDER_JAR, StackProcess.freePort(), StackProcess.freePort(), orderEnv)
        .startAndAwaitPort();
    assertThat(StackProcess.command("dev-tokens", DEV_KIT_JAR, List.of("dev-tokens", AUTH.toString(), POLICY,
        "--subject", "customer=C4821"))
        .runToEnd(Duration.ofSeconds(60))).startsWith("exit=0");
    gateway = StackProcess.service("gateway", GATEWAY_JAR, StackProcess.freePort(), StackProcess.freePort(),
        withTls(Map.of(
            "INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort,
            "ORDER_ADDRESSES", "127.0.0.1:" + orders1.grpcPort + ",127.0.0.1:" + orders2.grpcPort,
            "CIRCUIT_OPEN_SECONDS", "1",
            "SHUTDOWN_GRACE_SECONDS", "5",
            "AUTH_POLICY_FILE", POLICY,
            "AUTH_JWKS_FILE", AUTH.resolve(DevTokens.JWKS_FILE).toString(),
            "AUTH_JWT_ISSUER", DevTokens.ISSUER,
            "AUTH_JWT_AUDIENCE", DevTokens.AUDIENCE), "gateway", Map.of(
            "BACKEND_TLS_MODE", "mtls",
            "INVENTORY_TRUSTED_PEERS", LocalCa.spiffeId("inventory-service"),
            "ORDER_TRUSTED_PEERS", LocalCa.spiffeId("order-service"))))
        .startAndAwaitPort();
    prometheus = PrometheusServer.start(List.of(inventory, orders1, orders2, gateway).stream()
        .map(p -> "127.0.0.1:" + p.metricsPort).toList());
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort).usePlaintext()
        .intercept(BearerToken.interceptor(token("admin"))).build();
  }

  private static String token(String role) throws java.io.IOException {
    return BearerToken.read(AUTH.resolve(role + ".jwt"));
  }

  /** {@code env} with {@code name}'s certificate files, the CA, and {@code settings}. */
  private static Map<String, String> withTls(Map<String, String> env, String name, Map<String, String> settings) {
    Map<String, String> all = new HashMap<>(env);
    all.put("TLS_CERT_FILE", certs.resolve(name + ".pem").toString());
    all.put("TLS_KEY_FILE", certs.resolve(name + "-key.pem").toString());
    all.put("TLS_CA_FILE", certs.resolve("ca.pem").toString());
    all.putAll(settings);
    return all;
  }

  @AfterAll
  static void stopStack() throws Exception {
    if (channel != null) {
      channel.shutdownNow();
    }
    if (prometheus != null) {
      prometheus.close();
    }
    for (StackProcess p : new StackProcess[] {gateway, orders1, orders2, inventory}) {
      if (p != null) {
        p.stop();
      }
    }
  }

  private static InventoryServiceGrpc.InventoryServiceBlockingStub inventoryStub() {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static OrderServiceGrpc.OrderServiceBlockingStub orderStub() {
    return OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  @Test
  @org.junit.jupiter.api.Order(1)
  void demoData_loadsThroughTheGateway_andLoadingTwiceChangesNothing() throws Exception {
    String first = StackProcess.command("load-demo-data-1", DEV_KIT_JAR, List.of("load-demo-data", "--token-file",
        AUTH.resolve("admin.jwt").toString(), "127.0.0.1:" + gateway.grpcPort))
        .runToEnd(Duration.ofSeconds(120));
    assertThat(first).startsWith("exit=0").contains("written=7");
    String second = StackProcess.command("load-demo-data-2", DEV_KIT_JAR, List.of("load-demo-data", "--token-file",
        AUTH.resolve("admin.jwt").toString(), "127.0.0.1:" + gateway.grpcPort))
        .runToEnd(Duration.ofSeconds(120));
    assertThat(second).startsWith("exit=0").contains("written=0");
  }

  @Test
  @org.junit.jupiter.api.Order(2)
  void everyAccessPatternAnswers_throughTheGateway() {
    assertThat(inventoryStub().getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN-98471").build())
        .getProductId()).isEqualTo("P100");
    assertThat(inventoryStub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId("P100").setWarehouseId("W2").build()).getQuantity()).isEqualTo(25);
    assertThat(inventoryStub().listProductWarehouses(ListProductWarehousesRequest.newBuilder().setProductId("P100").build())
        .getInventoriesList()).extracting(ProductInventory::getWarehouseId).containsExactly("W1", "W2", "W3");
    assertThat(inventoryStub().listWarehouseProducts(ListWarehouseProductsRequest.newBuilder().setWarehouseId("W1").build())
        .getInventoriesList()).extracting(ProductInventory::getProductId).containsExactly("P100");
    assertThat(orderStub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId("C4821").build())
        .getOrdersList()).extracting(Order::getOrderId).containsExactly("O900", "O844", "O711");
    assertThat(orderStub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId("C4821")
        .setDatePrefix("2026-07").build()).getOrdersList()).extracting(Order::getOrderId).containsExactly("O900", "O844");
    assertThat(orderStub().getOrder(GetOrderRequest.newBuilder().setOrderId("O900").build()).getOrderDate())
        .isEqualTo("2026-07-26");
    assertThat(inventoryStub().listLowStock(ListLowStockRequest.newBuilder().setConsistentRead(true).build())
        .getInventoriesList())
        .extracting(ProductInventory::getProductId, ProductInventory::getWarehouseId, ProductInventory::getQuantity,
            ProductInventory::getReorderPoint)
        .containsExactly(tuple("P100", "W3", 2L, 10L));
    // The demo orders hold their units: O711's 5 at W2.
    ProductInventory w2 = inventoryStub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId("P100").setWarehouseId("W2").setConsistentRead(true).build());
    assertThat(w2.getReserved()).isEqualTo(5);
    assertThat(w2.getAvailable()).isEqualTo(20);
  }

  @Test
  @org.junit.jupiter.api.Order(3)
  void everyWriteWorks_andErrorsPassThroughWithTheirDetails() {
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    inventoryStub().putSerialItem(PutSerialItemRequest.newBuilder().setItem(SerialItem.newBuilder()
        .setSerialNumber("SN-" + product).setProductId(product).setWarehouseId("W9")).build());
    inventoryStub().putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId("W9").setQuantity(3)).build());
    assertThat(inventoryStub().adjustStock(AdjustStockRequest.newBuilder().setProductId(product).setWarehouseId("W9")
        .setDelta(-1).setRequestId("r-" + product).build()).getQuantity()).isEqualTo(2);
    Order placed = orderStub().placeOrder(PlaceOrderRequest.newBuilder().setCustomerId("C-" + product)
        .addLines(dev.warehouse.order.v1.OrderLine.newBuilder().setProductId(product).setWarehouseId("W9").setQuantity(1)
            .setUnitPrice(com.google.type.Money.newBuilder().setCurrencyCode("EUR").setUnits(3)))
        .setRequestId("r-" + product).build());
    assertThat(placed.getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
    ProductInventory held = inventoryStub().getProductInventory(dev.warehouse.inventory.v1.GetProductInventoryRequest
        .newBuilder().setProductId(product).setWarehouseId("W9").setConsistentRead(true).build());
    assertThat(held.getReserved()).as("the unit the order holds").isEqualTo(1);
    assertThat(held.getAvailable()).isEqualTo(1);
    assertThat(orderStub().updateOrderStatus(UpdateOrderStatusRequest.newBuilder().setOrderId(placed.getOrderId())
        .setStatus(OrderStatus.ORDER_STATUS_PAID).build()).getVersion()).isEqualTo(2);

    // Statuses and google.rpc details arrive exactly as the service sent them.
    assertInvalid(() -> inventoryStub().getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN#1").build()),
        "serial_number");
    assertStatus(() -> inventoryStub().adjustStock(AdjustStockRequest.newBuilder().setProductId(product).setWarehouseId("W9")
        .setDelta(-50).setRequestId("r2-" + product).build()), Status.Code.FAILED_PRECONDITION, "INSUFFICIENT_STOCK");
    assertStatus(() -> orderStub().getOrder(GetOrderRequest.newBuilder().setOrderId("nope").build()),
        Status.Code.NOT_FOUND, "ORDER_NOT_FOUND");
  }

  @Test
  @org.junit.jupiter.api.Order(4)
  void reflectionAndHealth_onTheGateway() throws Exception {
    ServerReflectionResponse listed = Reflection.ask(channel, ServerReflectionRequest.newBuilder().setListServices("").build());
    assertThat(listed.getListServicesResponse().getServiceList())
        .extracting(s -> s.getName())
        .contains("warehouse.inventory.v1.InventoryService", "warehouse.order.v1.OrderService", "grpc.health.v1.Health",
            "warehouse.admin.v1.AdminService");

    assertThat(health("warehouse.inventory.v1.InventoryService")).isEqualTo(ServingStatus.SERVING);
    assertThat(health("warehouse.order.v1.OrderService")).isEqualTo(ServingStatus.SERVING);
  }

  /** Without a credential nothing but health answers; the debugger reads and may not write; the audit names callers, never tokens. */
  @Test
  @org.junit.jupiter.api.Order(4)
  void callers_areAuthenticatedAndAuthorized_atTheGateway_andItsWritesAudited() throws Exception {
    ManagedChannel anonymous = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort).usePlaintext().build();
    try {
      assertStatus(() -> OrderServiceGrpc.newBlockingStub(anonymous).withDeadlineAfter(10, TimeUnit.SECONDS)
          .getOrder(GetOrderRequest.newBuilder().setOrderId("O900").build()), Status.Code.UNAUTHENTICATED, "CREDENTIALS_MISSING");
      assertThat(HealthGrpc.newBlockingStub(anonymous).withDeadlineAfter(5, TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
      io.grpc.Channel debugger = io.grpc.ClientInterceptors.intercept(anonymous, BearerToken.interceptor(token("debugger")));
      assertThat(OrderServiceGrpc.newBlockingStub(debugger).withDeadlineAfter(10, TimeUnit.SECONDS)
          .getOrder(GetOrderRequest.newBuilder().setOrderId("O900").build()).getOrderId()).isEqualTo("O900");
      assertStatus(() -> InventoryServiceGrpc.newBlockingStub(debugger).withDeadlineAfter(10, TimeUnit.SECONDS)
          .adjustStock(AdjustStockRequest.newBuilder().setProductId("P100").setWarehouseId("W1").setDelta(-1)
              .setRequestId("r-debugger").build()), Status.Code.PERMISSION_DENIED, "METHOD_NOT_ALLOWED");
      // The demo customer's token (as run.sh prints it) sees exactly its own orders, and nothing of another's.
      io.grpc.Channel customer = io.grpc.ClientInterceptors.intercept(anonymous, BearerToken.interceptor(token("customer")));
      assertThat(OrderServiceGrpc.newBlockingStub(customer).withDeadlineAfter(10, TimeUnit.SECONDS)
          .listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId("C4821").setConsistentRead(true).build())
          .getOrdersList()).extracting(Order::getCustomerId).containsOnly("C4821").hasSizeGreaterThanOrEqualTo(3);
      assertThat(OrderServiceGrpc.newBlockingStub(customer).withDeadlineAfter(10, TimeUnit.SECONDS)
          .getOrder(GetOrderRequest.newBuilder().setOrderId("O900").build()).getCustomerId()).isEqualTo("C4821");
      assertStatus(() -> OrderServiceGrpc.newBlockingStub(customer).withDeadlineAfter(10, TimeUnit.SECONDS)
          .listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId("C1").build()),
          Status.Code.PERMISSION_DENIED, "OUT_OF_SCOPE");
      assertStatus(() -> OrderServiceGrpc.newBlockingStub(customer).withDeadlineAfter(10, TimeUnit.SECONDS)
          .getOrder(GetOrderRequest.newBuilder().setOrderId("O-NOBODYS").build()), Status.Code.PERMISSION_DENIED,
          "OUT_OF_SCOPE");
    } finally {
      anonymous.shutdownNow();
    }
    String log = java.nio.file.Files.readString(StackProcess.ROOT.resolve("gateway/target/e2e-logs/gateway.log"));
    List<Map<String, Object>> audit = LogLines.fromLast(log, "starting").stream() // this run's
        .filter(line -> "audit".equals(line.get("event"))).toList();
    assertThat(audit).anySatisfy(line -> assertThat(line).containsEntry("caller", "dev-admin").containsEntry("auth", "jwt")
        .containsEntry("roles", "admin"));
    assertThat(audit).anySatisfy(line -> assertThat(line).containsEntry("caller", "dev-debugger")
        .containsEntry("auth", "jwt").containsEntry("roles", "debugger")
        .containsEntry("method", "warehouse.inventory.v1.InventoryService/AdjustStock")
        .containsEntry("status", "PERMISSION_DENIED").containsEntry("reason", "METHOD_NOT_ALLOWED"));
    for (String role : List.of("admin", "debugger")) {
      assertThat(log).doesNotContain(token(role).substring(token(role).lastIndexOf('.') + 1));
    }
  }

  @Test
  @org.junit.jupiter.api.Order(5)
  void killingOneOrderInstance_midStream_losesNoRead() throws Exception {
    AtomicInteger ok = new AtomicInteger();
    List<Throwable> lost = java.util.Collections.synchronizedList(new ArrayList<>());
    int reads = 300;
    CompletableFuture<Void> stream = CompletableFuture.runAsync(() -> {
      for (int i = 0; i < reads; i++) {
        try {
          if (i % 2 == 0) {
            orderStub().getOrder(GetOrderRequest.newBuilder().setOrderId("O900").build());
          } else {
            orderStub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId("C4821").build());
          }
          ok.incrementAndGet();
        } catch (StatusRuntimeException e) {
          lost.add(e);
        }
      }
    });
    Awaitility.await("a third of the reads").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
        .until(() -> ok.get() >= reads / 3);
    orders1.kill();
    stream.get(120, TimeUnit.SECONDS);
    assertThat(lost).as("reads lost after killing one instance").isEmpty();
    assertThat(ok.get()).isEqualTo(reads);
  }

  @Test
  @org.junit.jupiter.api.Order(6)
  void stoppingTheInventory_opensItsCircuit_andRestartingItClosesIt() throws Exception {
    GetProductInventoryRequest read = GetProductInventoryRequest.newBuilder().setProductId("P100").setWarehouseId("W1").build();
    inventory.stop();
    awaitHealth("warehouse.inventory.v1.InventoryService", ServingStatus.NOT_SERVING);
    for (int i = 0; i < GatewayProcess.CIRCUIT_MIN_CALLS; i++) {
      assertThat(failure(() -> inventoryStub().getProductInventory(read)).getStatus().getCode())
          .isEqualTo(Status.Code.UNAVAILABLE);
    }
    // Refused without being sent (the reason below says so), which is what makes it fast; no wall-clock bound.
    StatusRuntimeException fast = failure(() -> inventoryStub().getProductInventory(read));
    assertThat(fast.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(Statuses.detail(fast, ErrorInfo.class).getReason()).isEqualTo("BACKEND_CIRCUIT_OPEN");
    // The order-service is unaffected: one circuit per backend.
    assertThat(orderStub().getOrder(GetOrderRequest.newBuilder().setOrderId("O900").build()).getOrderId()).isEqualTo("O900");

    inventory = StackProcess.service("inventory-service-restarted", INVENTORY_JAR, inventory.grpcPort,
        inventory.metricsPort, inventoryEnv).startAndAwaitPort();
    awaitHealth("warehouse.inventory.v1.InventoryService", ServingStatus.SERVING);
    // The inventory answers again once its circuit closes (until then the call fails: still open).
    Awaitility.await("the inventory answers again").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
        .ignoreExceptionsInstanceOf(StatusRuntimeException.class).until(() -> inventoryStub().getProductInventory(read) != null);
    for (int i = 0; i < 3; i++) {
      inventoryStub().getProductInventory(read); // the half-open circuit's trial calls succeed: it closes
    }
    assertThat(MetricsScrape.scrape(gateway.metricsPort).lines().filter(l -> l.startsWith("resilience4j_circuitbreaker_state")))
        .contains("resilience4j_circuitbreaker_state{application=\"gateway\",name=\"inventory-service\",state=\"closed\"} 1.0");
  }

  /**
   * The hot keys of every instance, through the gateway: the restarted inventory-service's and the
   * surviving order-service's counts, and the killed order-service named as not answering.
   */
  @Test
  @org.junit.jupiter.api.Order(7)
  void listHotKeys_throughTheGateway_asksEveryInstance() {
    ListHotKeysResponse response = AdminServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
        .listHotKeys(ListHotKeysRequest.getDefaultInstance());
    assertThat(response.getAccessPatternsList())
        .extracting(AccessPatternHotKeys::getService, AccessPatternHotKeys::getPatternId)
        .contains(tuple("inventory-service", "A2"), tuple("order-service", "A6"), tuple("order-service", "A5"));
    AccessPatternHotKeys a2 = response.getAccessPatternsList().stream().filter(p -> p.getPatternId().equals("A2"))
        .findFirst().orElseThrow();
    assertThat(a2.getHotKeys(0).getPartitionKey()).as("the product the circuit test read").isEqualTo("PRODUCT#P100");
    assertThat(response.getUnansweredInstancesList())
        .extracting(UnansweredInstance::getService, UnansweredInstance::getAddress, UnansweredInstance::getCode)
        .containsExactly(tuple("order-service", "127.0.0.1:" + orders1.grpcPort, "UNAVAILABLE"));
  }

  @Test
  @org.junit.jupiter.api.Order(8)
  void everyProcessExportsItsMetrics() {
    assertThat(MetricsScrape.scrape(gateway.metricsPort)).contains(
        "grpc_server_processing_duration_seconds_bucket{application=\"gateway\"",
        "grpc_client_processing_duration_seconds_bucket{application=\"gateway\"",
        "resilience4j_circuitbreaker_calls_seconds_count{application=\"gateway\"",
        "jvm_memory_used_bytes{application=\"gateway\"");
    assertThat(MetricsScrape.scrape(inventory.metricsPort)).contains(
        "grpc_server_processing_duration_seconds_bucket{application=\"inventory-service\"",
        "dynamodb_client_request_duration_seconds_bucket{application=\"inventory-service\"",
        "dynamodb_consumed_capacity_units_total{application=\"inventory-service\"",
        "dynamodb_hottest_partition_share{application=\"inventory-service\",pattern=\"A2\"}",
        "dynamodb_hottest_partition_capacity_units_per_second{application=\"inventory-service\",pattern=\"A2\"}",
        "reservation_holds_expired_total{application=\"inventory-service\"",
        "reservation_expired_hold_age_seconds{application=\"inventory-service\"",
        "jvm_gc_");
    assertThat(MetricsScrape.scrape(orders2.metricsPort)).contains(
        "grpc_server_processing_duration_seconds_bucket{application=\"order-service\"",
        "dynamodb_client_request_duration_seconds_bucket{application=\"order-service\"",
        "dynamodb_transactions_total{application=\"order-service\"",
        "dynamodb_hottest_partition_share{application=\"order-service\",pattern=\"A6\"}",
        "resilience4j_retry_calls_total{application=\"order-service\"",
        "order_stock_step_oldest_overdue_seconds{application=\"order-service\"",
        "resilience4j_circuitbreaker_state{application=\"order-service\",name=\"inventory-service\"");
  }

  /**
   * Every query of the Grafana dashboard, run against a real Prometheus that scraped this stack while
   * the tests above drove traffic through it, returns data.
   */
  @Test
  @org.junit.jupiter.api.Order(9)
  void everyDashboardQuery_returnsData_fromARealPrometheus() throws Exception {
    // Orders buying stock, so the reservation panels see the inventory (restarted above) serve them.
    String product = "P-" + UUID.randomUUID().toString().substring(0, 8);
    inventoryStub().putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(product).setWarehouseId("W9").setQuantity(100)).build());
    for (int i = 0; i < 5; i++) {
      assertThat(orderStub().placeOrder(PlaceOrderRequest.newBuilder().setCustomerId("C-" + product)
          .addLines(dev.warehouse.order.v1.OrderLine.newBuilder().setProductId(product).setWarehouseId("W9").setQuantity(1)
              .setUnitPrice(com.google.type.Money.newBuilder().setCurrencyCode("EUR").setUnits(3)))
          .setRequestId("r" + i + "-" + product).build()).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED);
    }
    // A little more mixed traffic, so the last scrapes see every kind of call.
    for (int i = 0; i < 20; i++) {
      inventoryStub().listWarehouseProducts(ListWarehouseProductsRequest.newBuilder().setWarehouseId("W1").build());
      inventoryStub().listProductWarehouses(ListProductWarehousesRequest.newBuilder().setProductId("P100").build());
      orderStub().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId("C4821").build());
    }
    assertThat(Dashboard.queries()).hasSizeGreaterThanOrEqualTo(20);
    // The version and pod variables (All: every value, as .*) and the deploy annotation are used, so run too.
    assertThat(Dashboard.queryVariables()).contains("version", "pod");
    assertThat(Dashboard.queries()).anyMatch(q -> q.contains("$pod")).anyMatch(q -> q.contains("$version"));
    assertThat(Dashboard.annotationQueries()).isNotEmpty();
    // Asked again until the scrapes after that traffic (one a second) give every query data.
    Awaitility.await("every dashboard query has data").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1))
        .untilAsserted(() -> {
          List<String> empty = new ArrayList<>();
          List<String> instant = new ArrayList<>(Dashboard.queries());
          instant.addAll(Dashboard.variableQueries());
          for (String expr : instant) {
            String runnable = Dashboard.runnable(expr);
            assertThat(runnable).as("%s with its variables replaced", expr).doesNotContain("$");
            String answer = prometheus.query(runnable);
            assertThat(answer).as(expr).contains("\"status\":\"success\"");
            if (answer.contains("\"result\":[]")) {
              empty.add(expr);
            }
          }
          // An annotation marks a moment: Grafana runs it over the time shown, so it is run from Prometheus's start,
          // when every process's revision was new to it, to now; each must mark something in that range.
          for (String expr : Dashboard.annotationQueries()) {
            String answer = prometheus.queryRange(Dashboard.runnable(expr), prometheus.started(), java.time.Instant.now(),
                Duration.ofSeconds(5));
            assertThat(answer).as(expr).contains("\"status\":\"success\"");
            if (answer.contains("\"result\":[]")) {
              empty.add(expr);
            }
          }
          assertThat(empty).as("dashboard queries without data").isEmpty();
        });
    // The deploy annotation names the processes whose build appeared: all four, of one revision.
    assertThat(prometheus.queryRange(Dashboard.runnable(Dashboard.annotationQueries().get(0)), prometheus.started(),
        java.time.Instant.now(), Duration.ofSeconds(5)))
        .contains("\"application\":\"gateway\"", "\"application\":\"inventory-service\"",
            "\"application\":\"order-service\"", "\"revision\":");

    // The alert rules: all loaded and evaluating without error, and their SLO ratios computed from the
    // gateway's real series (the circuit test above made the gateway answer UNAVAILABLE).
    String rules = prometheus.rules();
    assertThat(rules).contains("\"status\":\"success\"", "RpcAvailabilityBudgetBurnFast", "GatewayCircuitOpen")
        .doesNotContain("\"health\":\"err\"");
    for (String window : List.of("5m", "30m", "1h", "6h", "3d")) {
      assertThat(prometheus.query("service_method:grpc_server_slow_ratio:rate" + window))
          .as("latency SLO ratio over " + window).contains("\"method\":\"ListWarehouseProducts\"");
    }
    assertThat(prometheus.query("service_method:grpc_server_error_ratio:rate1h"))
        .as("availability SLO ratio").contains("\"method\":\"GetProductInventory\"");
  }

  /**
   * Nothing goes around the gateway: a service refuses plaintext, and a certificate of the right CA but
   * another identity gets PERMISSION_DENIED, except for health.
   */
  @Test
  @org.junit.jupiter.api.Order(10)
  void theServices_admitOnlyTheGateway() throws Exception {
    GetSerialItemRequest read = GetSerialItemRequest.newBuilder().setSerialNumber("SN-98471").build();
    ManagedChannel plaintext = NettyChannelBuilder.forAddress("127.0.0.1", inventory.grpcPort).usePlaintext().build();
    ManagedChannel client = NettyChannelBuilder.forTarget("localhost:" + inventory.grpcPort, TlsChannelCredentials.newBuilder()
        .trustManager(certs.resolve("ca.pem").toFile())
        .keyManager(certs.resolve("client.pem").toFile(), certs.resolve("client-key.pem").toFile()).build()).build();
    try {
      assertThat(failure(() -> InventoryServiceGrpc.newBlockingStub(plaintext).withDeadlineAfter(5, TimeUnit.SECONDS)
          .getSerialItem(read)).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertStatus(() -> InventoryServiceGrpc.newBlockingStub(client).withDeadlineAfter(5, TimeUnit.SECONDS)
          .getSerialItem(read), Status.Code.PERMISSION_DENIED, "PEER_NOT_TRUSTED");
      assertThat(HealthGrpc.newBlockingStub(client).withDeadlineAfter(5, TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
    } finally {
      plaintext.shutdownNow();
      client.shutdownNow();
    }
  }

  private static ServingStatus health(String service) {
    return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
  }

  /**
   * Last, since it stops the gateway: writes stream through it while it is stopped with SIGTERM, and once it has
   * exited its log holds an audit line for every write its callers saw answered OK, the last ones included (the
   * stop writes out the lines still queued).
   */
  @Test
  @org.junit.jupiter.api.Order(11)
  void sigtermMidWrites_leavesAnAuditLineForEveryAnsweredWrite() throws Exception {
    java.util.Set<String> answered = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.concurrent.CountDownLatch enough = new java.util.concurrent.CountDownLatch(100);
    java.util.concurrent.ExecutorService writers = java.util.concurrent.Executors.newFixedThreadPool(8);
    try {
      for (int w = 0; w < 8; w++) {
        int writer = w;
        writers.submit(() -> {
          // Until the gateway is gone: a few failures in a row once it has stopped listening.
          for (int n = 0, failures = 0; failures < 3; n++) {
            String product = "AUD-" + writer + "-" + n;
            try {
              inventoryStub().putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(
                  ProductInventory.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)).build());
              answered.add(product);
              enough.countDown();
              failures = 0;
            } catch (io.grpc.StatusRuntimeException e) {
              failures++;
            }
          }
          return null;
        });
      }
      assertThat(enough.await(120, TimeUnit.SECONDS)).as("writes answered before the stop").isTrue();
      gateway.stop(); // SIGTERM, and waits for the process to exit
      writers.shutdown();
      assertThat(writers.awaitTermination(60, TimeUnit.SECONDS)).as("the writers saw the gateway go").isTrue();
    } finally {
      writers.shutdownNow();
    }
    String log = java.nio.file.Files.readString(StackProcess.ROOT.resolve("gateway/target/e2e-logs/gateway.log"));
    List<Map<String, Object>> lines = LogLines.fromLast(log, "starting"); // this run's
    assertThat(lines).as("the gateway stopped as SIGTERM stops it")
        .anySatisfy(line -> assertThat(line).containsEntry("event", "stopped").containsEntry("service", "gateway"));
    java.util.Set<Object> audited = lines.stream().filter(line -> "audit".equals(line.get("event"))
            && "warehouse.inventory.v1.InventoryService/PutProductInventory".equals(line.get("method"))
            && "OK".equals(line.get("status")))
        .map(line -> line.get("product_id")).collect(java.util.stream.Collectors.toSet());
    assertThat(answered).hasSizeGreaterThanOrEqualTo(100);
    assertThat(audited).as("an audit line for every write answered OK").containsAll(answered);
  }

  private static void awaitHealth(String service, ServingStatus wanted) {
    Awaitility.await(service + " " + wanted).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
        .until(() -> health(service), wanted::equals);
  }
}
