package dev.warehouse.gateway.auth;

import static dev.warehouse.testing.Statuses.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.type.Money;
import com.nimbusds.jose.jwk.ECKey;
import dev.warehouse.gateway.GatewayConfig;
import dev.warehouse.gateway.GatewayProcess;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.order.OrderMain;
import dev.warehouse.order.OrderSettings;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.order.v1.UpdateOrderStatusRequest;
import dev.warehouse.runtime.scope.CallerScope;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.testing.LogRecords;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The development policy's {@code customer} role through the gateway, with the real services on moto: a customer's
 * token (its {@code sub} is its customer id) reaches its own orders only. The gateway compares the request's
 * {@code customer_id} where the route's partition key is built from it (PlaceOrder, ListCustomerOrders); for the
 * routes keyed by order id (GetOrder, UpdateOrderStatus) the order-service compares the stored order's. Every
 * refusal is PERMISSION_DENIED, {@code OUT_OF_SCOPE}, whether the order exists or not.
 */
@Tag("integration")
class CustomerScopeTest {

  private static final ECKey KEY = TestTokens.ecKey("ec-1");
  private static final String CUSTOMER = "C4821";
  private static final String OTHER = "C777";

  private static Path dir;
  private static ServerProcess inventory;
  private static ServerProcess orders;
  private static GatewayProcess gateway;
  private static ManagedChannel channel;
  private static LogRecords audit;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("customer-scope");
    Path jwks = dir.resolve("jwks.json");
    TestTokens.writeJwks(jwks, KEY);
    String table = TestServices.uniqueTableName();
    inventory = DynamoPlugin.start(TestServices.config(InventoryMain.SERVICE_NAME, table), InventoryMain::services,
        List.of());
    orders = DynamoPlugin.start(TestServices.config(OrderMain.SERVICE_NAME, table),
        OrderMain.services(OrderSettings.plaintext("127.0.0.1:" + inventory.grpcPort())), List.of());
    AuthConfig auth = TestTokens.jwtAuth(GatewayAuthTest.DEV_POLICY, jwks);
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + inventory.grpcPort()),
        List.of("127.0.0.1:" + orders.grpcPort()), Duration.ofSeconds(10), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
        GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(1)).withAuth(auth));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
    audit = new LogRecords(AuditTrail.class);

    InventoryServiceGrpc.newBlockingStub(channel).withInterceptors(as("admin", "ops"))
        .withDeadlineAfter(10, TimeUnit.SECONDS).putProductInventory(PutProductInventoryRequest.newBuilder()
            .setInventory(ProductInventory.newBuilder().setProductId("P1").setWarehouseId("W1").setQuantity(100)).build());
    place(admin(), CUSTOMER, "O-MINE");
    place(admin(), OTHER, "O-THEIRS");
  }

  @AfterAll
  static void stop() throws Exception {
    if (audit != null) {
      audit.close();
    }
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    for (AutoCloseable process : new AutoCloseable[] {gateway, orders, inventory}) {
      if (process != null) {
        process.close();
      }
    }
  }

  /** A token of {@code subject} with {@code role}, attached to every call. */
  private static io.grpc.ClientInterceptor as(String role, String subject) {
    Metadata headers = new Metadata();
    headers.put(CallerAuthentication.AUTHORIZATION, "Bearer "
        + TestTokens.sign(KEY, TestTokens.claims(subject, Instant.now(), role).build()));
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }

  private static OrderServiceGrpc.OrderServiceBlockingStub admin() {
    return OrderServiceGrpc.newBlockingStub(channel).withInterceptors(as("admin", "ops"))
        .withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static OrderServiceGrpc.OrderServiceBlockingStub customer() {
    return OrderServiceGrpc.newBlockingStub(channel).withInterceptors(as("customer", CUSTOMER))
        .withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static Order place(OrderServiceGrpc.OrderServiceBlockingStub stub, String customerId, String orderId) {
    return stub.placeOrder(PlaceOrderRequest.newBuilder().setCustomerId(customerId).setOrderId(orderId)
        .setRequestId("req-" + orderId).setOrderDate("2026-07-26")
        .addLines(OrderLine.newBuilder().setProductId("P1").setWarehouseId("W1").setQuantity(1)
            .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(10)))
        .build());
  }

  private static UpdateOrderStatusRequest status(String orderId, OrderStatus status) {
    return UpdateOrderStatusRequest.newBuilder().setOrderId(orderId).setStatus(status).build();
  }

  @Test
  void aCustomer_placesListsReadsAndCancels_itsOwnOrders() {
    assertThat(place(customer(), CUSTOMER, "O-NEW").getCustomerId()).isEqualTo(CUSTOMER);
    assertThat(customer().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId(CUSTOMER)
        .setConsistentRead(true).build()).getOrdersList()).extracting(Order::getOrderId).contains("O-MINE", "O-NEW")
        .doesNotContain("O-THEIRS");
    assertThat(customer().getOrder(GetOrderRequest.newBuilder().setOrderId("O-MINE").setConsistentRead(true).build())
        .getCustomerId()).isEqualTo(CUSTOMER);
    assertThat(customer().updateOrderStatus(status("O-NEW", OrderStatus.ORDER_STATUS_CANCELLED)).getStatus())
        .isEqualTo(OrderStatus.ORDER_STATUS_CANCELLED);
  }

  @Test
  void everythingElse_isPermissionDenied_whetherTheOrderExistsOrNot() throws Exception {
    audit.clear();
    // Checked by the gateway: the request's customer_id builds the route's partition key.
    assertStatus(() -> customer().listCustomerOrders(ListCustomerOrdersRequest.newBuilder().setCustomerId(OTHER).build()),
        Status.Code.PERMISSION_DENIED, CallerScope.REFUSED);
    assertStatus(() -> place(customer(), OTHER, "O-FORGED"), Status.Code.PERMISSION_DENIED, CallerScope.REFUSED);
    // Checked by the order-service against the stored order: another's, and one that does not exist, alike.
    assertStatus(() -> customer().getOrder(GetOrderRequest.newBuilder().setOrderId("O-THEIRS").build()),
        Status.Code.PERMISSION_DENIED, CallerScope.REFUSED);
    assertStatus(() -> customer().getOrder(GetOrderRequest.newBuilder().setOrderId("O-NONE").build()),
        Status.Code.PERMISSION_DENIED, CallerScope.REFUSED);
    assertStatus(() -> customer().updateOrderStatus(status("O-THEIRS", OrderStatus.ORDER_STATUS_CANCELLED)),
        Status.Code.PERMISSION_DENIED, CallerScope.REFUSED);
    // Its own order, but not to cancel it: the rule allows cancelling only.
    assertStatus(() -> customer().updateOrderStatus(status("O-MINE", OrderStatus.ORDER_STATUS_PAID)),
        Status.Code.PERMISSION_DENIED, CallerScope.REFUSED);
    // Not in the role at all.
    assertStatus(() -> InventoryServiceGrpc.newBlockingStub(channel).withInterceptors(as("customer", CUSTOMER))
        .withDeadlineAfter(10, TimeUnit.SECONDS).putProductInventory(PutProductInventoryRequest.getDefaultInstance()),
        Status.Code.PERMISSION_DENIED, "METHOD_NOT_ALLOWED");
    assertThat(admin().getOrder(GetOrderRequest.newBuilder().setOrderId("O-THEIRS").setConsistentRead(true).build())
        .getStatus()).as("the refused cancel changed nothing").isEqualTo(OrderStatus.ORDER_STATUS_PLACED);

    // The audit line names the scope that refused the call, whether the gateway or the service refused it.
    gateway.access().awaitAuditWritten();
    assertThat(audit.events()).anySatisfy(line -> assertThat(line.fields())
        .containsEntry("method", "warehouse.order.v1.OrderService/PlaceOrder").containsEntry("status", "PERMISSION_DENIED")
        .containsEntry("reason", "OUT_OF_SCOPE").containsEntry("scope", "customer_id"));
    assertThat(audit.events()).anySatisfy(line -> assertThat(line.fields())
        .containsEntry("method", "warehouse.order.v1.OrderService/UpdateOrderStatus").containsEntry("order_id", "O-THEIRS")
        .containsEntry("reason", "OUT_OF_SCOPE").containsEntry("scope", "customer_id"));
  }

  /** The scope header is the gateway's to send: a caller's own copy changes nothing, scoped or not. */
  @Test
  void aCallerSentScopeHeader_changesNothing() {
    Metadata forged = new Metadata();
    forged.put(CallerScope.HEADER, new CallerScope("customer_id", OTHER).header());
    assertStatus(() -> customer().withInterceptors(MetadataUtils.newAttachHeadersInterceptor(forged))
        .getOrder(GetOrderRequest.newBuilder().setOrderId("O-THEIRS").build()), Status.Code.PERMISSION_DENIED,
        CallerScope.REFUSED);
    assertThat(admin().withInterceptors(MetadataUtils.newAttachHeadersInterceptor(forged))
        .getOrder(GetOrderRequest.newBuilder().setOrderId("O-MINE").setConsistentRead(true).build()).getCustomerId())
        .as("an unscoped caller is not narrowed by a header it sends").isEqualTo(CUSTOMER);
  }

  /** A scope on a field the route neither keys by nor declares as its owner field stops the gateway's start. */
  @Test
  void aScopeTheRouteCannotCheck_stopsTheStart(@TempDir Path temp) throws Exception {
    Path policy = Files.writeString(temp.resolve("policy.yaml"), "roles:\n  customer:\n"
        + "    - {method: warehouse.order.v1.OrderService/GetOrder, scope: warehouse_id}\n");
    AuthConfig auth = TestTokens.jwtAuth(policy, dir.resolve("jwks.json"));
    assertThatThrownBy(() -> GatewayAccess.start(auth, Clock.systemUTC(), GatewayProcess.servedServices(),
        List.of(dev.warehouse.order.v1.OrderServiceProto.getDescriptor().findServiceByName("OrderService")),
        new SimpleMeterRegistry()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("customer: warehouse.order.v1.OrderService/GetOrder's scope warehouse_id is neither a field "
            + "its route's partition key (ORDER#{order_id}) is built from nor one of its owner fields [customer_id]");
  }
}
