package dev.warehouse.gateway;

import static dev.warehouse.testing.Statuses.assertInvalid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.google.type.Money;
import dev.warehouse.admin.v1.AccessPatternHotKeys;
import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.HotKey;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.admin.v1.UnansweredInstance;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.order.OrderMain;
import dev.warehouse.order.OrderSettings;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.testing.Reflection;
import dev.warehouse.runtime.testing.TestServices;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.reflection.v1.ServerReflectionRequest;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ListHotKeys through the gateway: it asks every instance of both services (here an inventory-service,
 * an order-service and an order-service address where nothing listens), adds their counts up, and
 * names the instance that did not answer.
 */
@Tag("integration")
class GatewayHotKeysTest {

  private static final int READS = 30;

  private static ServerProcess inventory;
  private static ServerProcess orders;
  private static String deadOrderInstance;
  private static GatewayProcess gateway;
  private static ManagedChannel channel;
  private static String productId;
  private static String orderId;

  @BeforeAll
  static void start() throws Exception {
    String table = TestServices.uniqueTableName();
    inventory = DynamoPlugin.start(TestServices.config(InventoryMain.SERVICE_NAME, table), InventoryMain::services, List.of());
    orders = DynamoPlugin.start(TestServices.config(OrderMain.SERVICE_NAME, table),
        OrderMain.services(OrderSettings.plaintext("127.0.0.1:" + inventory.grpcPort())), List.of());
    try (ServerSocket socket = new ServerSocket(0)) {
      deadOrderInstance = "127.0.0.1:" + socket.getLocalPort();
    }
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + inventory.grpcPort()),
        List.of("127.0.0.1:" + orders.grpcPort(), deadOrderInstance), Duration.ofSeconds(10),
        GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET, GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(5)));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
    awaitServing("warehouse.inventory.v1.InventoryService");
    awaitServing("warehouse.order.v1.OrderService");

    productId = "P-" + UUID.randomUUID().toString().substring(0, 8);
    InventoryServiceGrpc.InventoryServiceBlockingStub inventoryStub =
        InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    inventoryStub.putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder()
        .setProductId(productId).setWarehouseId("W1").setQuantity(5)).build());
    OrderServiceGrpc.OrderServiceBlockingStub orderStub = OrderServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(30, TimeUnit.SECONDS);
    Order order = orderStub.placeOrder(PlaceOrderRequest.newBuilder().setCustomerId("C-" + productId)
        .addLines(OrderLine.newBuilder().setProductId(productId).setWarehouseId("W1").setQuantity(1)
            .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(3)))
        .setRequestId("r-" + productId).build());
    orderId = order.getOrderId();
    for (int i = 0; i < READS; i++) {
      inventoryStub.getProductInventory(GetProductInventoryRequest.newBuilder().setProductId(productId).setWarehouseId("W1")
          .setConsistentRead(true).build());
      orderStub.getOrder(GetOrderRequest.newBuilder().setOrderId(orderId).setConsistentRead(true).build());
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (gateway != null) {
      gateway.close();
    }
    if (orders != null) {
      orders.close();
    }
    if (inventory != null) {
      inventory.close();
    }
  }

  private static AdminServiceGrpc.AdminServiceBlockingStub admin() {
    return AdminServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  @Test
  void listHotKeys_throughTheGateway_returnsBothServicesPatterns_andNamesTheInstanceThatDidNotAnswer() {
    ListHotKeysResponse response = admin().listHotKeys(ListHotKeysRequest.getDefaultInstance());
    assertThat(response.getAccessPatternsList())
        .extracting(AccessPatternHotKeys::getService, AccessPatternHotKeys::getPatternId)
        .contains(tuple("inventory-service", "A2"), tuple("inventory-service", "W2"),
            tuple("order-service", "A6"), tuple("order-service", "W4"))
        .isSortedAccordingTo(java.util.Comparator.comparing((org.assertj.core.groups.Tuple t) -> (String) t.toArray()[0])
            .thenComparing(t -> (String) t.toArray()[1]));

    AccessPatternHotKeys a2 = pattern(response, "A2");
    assertThat(a2.getRequestCount()).isEqualTo(READS);
    assertThat(a2.getHotKeysList()).extracting(HotKey::getPartitionKey, HotKey::getRequestCount, HotKey::getShare)
        .containsExactly(tuple("PRODUCT#" + productId, (long) READS, 1.0));
    assertThat(pattern(response, "A6").getHotKeys(0).getPartitionKey()).isEqualTo("ORDER#" + orderId);
    assertThat(response.getWindow().getSeconds() + response.getWindow().getNanos()).isPositive();

    assertThat(response.getUnansweredInstancesList())
        .extracting(UnansweredInstance::getService, UnansweredInstance::getAddress, UnansweredInstance::getCode)
        .containsExactly(tuple("order-service", deadOrderInstance, "UNAVAILABLE"));
  }

  @Test
  void listHotKeys_throughTheGateway_filtersByPattern() {
    ListHotKeysResponse response = admin().listHotKeys(ListHotKeysRequest.newBuilder().setPatternId("A6").setLimit(1).build());
    assertThat(response.getAccessPatternsList()).extracting(AccessPatternHotKeys::getService, AccessPatternHotKeys::getPatternId)
        .containsExactly(tuple("order-service", "A6"));
    assertThat(response.getAccessPatterns(0).getHotKeysCount()).isEqualTo(1);
  }

  @Test
  void listHotKeys_throughTheGateway_refusesInvalidInput() {
    assertInvalid(() -> admin().listHotKeys(ListHotKeysRequest.newBuilder().setLimit(-1).build()), "limit");
    assertInvalid(() -> admin().listHotKeys(ListHotKeysRequest.newBuilder().setPatternId("A-2").build()), "pattern_id");
  }

  @Test
  void reflection_onTheGateway_describesTheAdminService() throws Exception {
    assertThat(Reflection.ask(channel, ServerReflectionRequest.newBuilder().setListServices("").build())
        .getListServicesResponse().getServiceList()).extracting(s -> s.getName())
        .contains("warehouse.admin.v1.AdminService", "warehouse.inventory.v1.InventoryService",
            "warehouse.order.v1.OrderService");
    assertThat(Reflection.ask(channel, ServerReflectionRequest.newBuilder()
        .setFileContainingSymbol("warehouse.admin.v1.AdminService.ListHotKeys").build())
        .getFileDescriptorResponse().getFileDescriptorProtoCount()).isPositive();
  }

  private static AccessPatternHotKeys pattern(ListHotKeysResponse response, String patternId) {
    return response.getAccessPatternsList().stream().filter(p -> p.getPatternId().equals(patternId)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + patternId + " in " + response));
  }

  private static void awaitServing(String service) {
    Awaitility.await(service + " SERVING through the gateway").atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50)).until(() -> HealthGrpc.newBlockingStub(channel)
            .withDeadlineAfter(5, TimeUnit.SECONDS).check(HealthCheckRequest.newBuilder().setService(service).build())
            .getStatus(), ServingStatus.SERVING::equals);
  }
}
