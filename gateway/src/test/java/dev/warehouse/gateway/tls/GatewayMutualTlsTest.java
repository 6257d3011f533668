package dev.warehouse.gateway.tls;

import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.gateway.GatewayConfig;
import dev.warehouse.gateway.GatewayProcess;
import dev.warehouse.devkit.CertsCommand;
import dev.warehouse.devkit.DemoData;
import dev.warehouse.devkit.LocalCa;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.InventorySettings;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.order.OrderMain;
import dev.warehouse.order.OrderSettings;
import dev.warehouse.runtime.process.HealthProbe;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.runtime.tls.ChannelTlsConfig;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TransportSecurity;
import dev.warehouse.runtime.tls.TrustedPeers;
import io.grpc.Channel;
import dev.warehouse.inventory.v1.GetReservationRequest;
import io.grpc.stub.MetadataUtils;
import io.grpc.Metadata;
import dev.warehouse.runtime.scope.CallerScope;
import io.grpc.StatusRuntimeException;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.OrderServiceGrpc;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The system as {@code ./run.sh --tls} runs it, in one JVM: certificates from the {@code certs} command,
 * both services in {@code mtls} mode trusting only the gateway, the gateway calling them over mTLS and
 * serving its own clients over mTLS. Calls, health, the hot keys (channels of their own) and the demo
 * loader all work through the gateway; nothing goes around it.
 */
@Tag("integration")
class GatewayMutualTlsTest {

  private static final String GATEWAY = LocalCa.spiffeId("gateway");

  @TempDir
  static Path certs;
  private static ServerProcess inventory;
  private static ServerProcess orders;
  private static GatewayProcess gateway;
  private static final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    CertsCommand.ensure(certs, false, Instant.now());
    String table = TestServices.uniqueTableName();
    inventory = DynamoPlugin.start(TestServices.config(InventoryMain.SERVICE_NAME, table)
        .withTls(files(TlsMode.MTLS, "inventory-service", List.of(GATEWAY)).withServicePeers(
            ReservationServiceGrpc.SERVICE_NAME, InventorySettings.fromEnvironment(Map.of()).reservationPeers())), // the order-service's
        InventoryMain::services, List.of());
    // The order-service calls the inventory's reservations itself, over mutual TLS with its own identity.
    orders = DynamoPlugin.start(TestServices.config(OrderMain.SERVICE_NAME, table)
        .withTls(files(TlsMode.MTLS, "order-service", List.of(GATEWAY))),
        OrderMain.services(OrderSettings.plaintext("127.0.0.1:" + inventory.grpcPort()).withInventoryTls(
            new ChannelTlsConfig(TlsMode.MTLS, TrustedPeers.of(List.of(LocalCa.spiffeId("inventory-service")))))),
        List.of());
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + inventory.grpcPort()),
        List.of("127.0.0.1:" + orders.grpcPort()), Duration.ofSeconds(10), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
        GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(5))
        .withTls(files(TlsMode.MTLS, "gateway", List.of()), backendChannels()));
  }

  /** Each backend's channel admits its own service's identity only. */
  private static Map<String, ChannelTlsConfig> backendChannels() {
    return Map.of(
        "inventory-service", new ChannelTlsConfig(TlsMode.MTLS, TrustedPeers.of(List.of(LocalCa.spiffeId("inventory-service")))),
        "order-service", new ChannelTlsConfig(TlsMode.MTLS, TrustedPeers.of(List.of(LocalCa.spiffeId("order-service")))));
  }

  @AfterAll
  static void stop() throws Exception {
    for (ManagedChannel channel : channels) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    for (AutoCloseable process : new AutoCloseable[] {gateway, orders, inventory}) {
      if (process != null) {
        process.close();
      }
    }
  }

  private static TlsConfig files(TlsMode mode, String name, List<String> trustedPeers) {
    return new TlsConfig(mode, Optional.of(certs.resolve(name + ".pem")), Optional.of(certs.resolve(name + "-key.pem")),
        Optional.of(certs.resolve("ca.pem")), TrustedPeers.of(trustedPeers), TlsConfig.DEFAULT_REFRESH);
  }

  /** A client as grpcurl is one: checks the server's host name against the CA, presents the client certificate. */
  private static Channel client(int port) throws Exception {
    return as("client", port);
  }

  @Test
  void theDemoLoader_andCalls_goThroughTheGateway_overMutualTlsOnEveryHop() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status = DemoData.run(new String[] {"--cacert", certs.resolve("ca.pem").toString(),
        "--cert", certs.resolve("client.pem").toString(), "--key", certs.resolve("client-key.pem").toString(),
        "127.0.0.1:" + gateway.grpcPort()}, new PrintStream(out, true, StandardCharsets.UTF_8));
    assertThat(status).as(out.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("written=7");

    Channel client = client(gateway.grpcPort());
    assertThat(InventoryServiceGrpc.newBlockingStub(client).withDeadlineAfter(10, TimeUnit.SECONDS)
        // Strongly read: the loader has just written it, and the stand-in serves eventual reads 200 ms behind.
        .getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN-98471").setConsistentRead(true).build())
        .getProductId())
        .isEqualTo("P100");
    for (String service : List.of("warehouse.inventory.v1.InventoryService", "warehouse.order.v1.OrderService")) {
      assertThat(HealthGrpc.newBlockingStub(client).withDeadlineAfter(5, TimeUnit.SECONDS)
          .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus())
          .as(service + " through the gateway's health-checked mTLS channels").isEqualTo(ServingStatus.SERVING);
    }
    ListHotKeysResponse hotKeys = AdminServiceGrpc.newBlockingStub(client).withDeadlineAfter(10, TimeUnit.SECONDS)
        .listHotKeys(ListHotKeysRequest.getDefaultInstance());
    assertThat(hotKeys.getUnansweredInstancesList()).as("every instance answers the gateway's admin channels").isEmpty();
  }

  @Test
  void nothingGoesAroundTheGateway() throws Exception {
    GetSerialItemRequest read = GetSerialItemRequest.newBuilder().setSerialNumber("SN-98471").build();
    // A certificate from the right CA, but not the gateway's identity.
    Channel direct = client(inventory.grpcPort());
    assertStatus(() -> InventoryServiceGrpc.newBlockingStub(direct).withDeadlineAfter(5, TimeUnit.SECONDS).getSerialItem(read),
        Status.Code.PERMISSION_DENIED, "PEER_NOT_TRUSTED");
    ManagedChannel plaintext = NettyChannelBuilder.forAddress("127.0.0.1", inventory.grpcPort(),
        InsecureChannelCredentials.create()).build();
    channels.add(plaintext);
    assertThat(failure(() -> InventoryServiceGrpc.newBlockingStub(plaintext).withDeadlineAfter(5, TimeUnit.SECONDS)
        .getSerialItem(read)).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  /**
   * A backend that presents another service's certificate (from the same CA) is refused: a gateway whose
   * inventory addresses lead to the order-service never sends it an inventory call, and says the backend is
   * unavailable; the order channel, pointed at the same order-service, works.
   */
  @Test
  void theInventoryChannel_refusesABackendPresentingTheOrderServicesCertificate() throws Exception {
    try (GatewayProcess misrouted = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + orders.grpcPort()),
        List.of("127.0.0.1:" + orders.grpcPort()), Duration.ofSeconds(10), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
        GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(5))
        .withTls(files(TlsMode.MTLS, "gateway", List.of()), backendChannels()))) {
      Channel client = client(misrouted.grpcPort());
      StatusRuntimeException refused = failure(() -> InventoryServiceGrpc.newBlockingStub(client)
          .withDeadlineAfter(5, TimeUnit.SECONDS)
          .getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN-98471").build()));
      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      // The order channel to the same process gets through: the order-service itself answers (nothing stored).
      assertStatus(() -> OrderServiceGrpc.newBlockingStub(client).withDeadlineAfter(10, TimeUnit.SECONDS)
          .getOrder(GetOrderRequest.newBuilder().setOrderId("O-NONE").setConsistentRead(true).build()),
          Status.Code.NOT_FOUND, "ORDER_NOT_FOUND");
    }
  }

  /** A channel to {@code port} presenting {@code name}'s certificate. */
  private static Channel as(String name, int port) throws Exception {
    ChannelCredentials credentials = TlsChannelCredentials.newBuilder().trustManager(certs.resolve("ca.pem").toFile())
        .keyManager(certs.resolve(name + ".pem").toFile(), certs.resolve(name + "-key.pem").toFile()).build();
    ManagedChannel channel = NettyChannelBuilder.forTarget("localhost:" + port, credentials).build();
    channels.add(channel);
    return channel;
  }

  /**
   * A caller's scope reaches a service only from the gateway: the order-service, trusted for the reservations, is
   * refused when it sends one; from the gateway's identity the service applies it (an order of nobody's, refused).
   */
  @Test
  void aForwardedScope_isAcceptedFromTheGatewaysIdentityOnly() throws Exception {
    Metadata scoped = new Metadata();
    scoped.put(CallerScope.HEADER, new CallerScope("customer_id", "C1").header());
    GetReservationRequest reservation = GetReservationRequest.newBuilder().setOrderId("O-NONE").setConsistentRead(true).build();
    Channel fromOrders = as("order-service", inventory.grpcPort());
    assertStatus(() -> ReservationServiceGrpc.newBlockingStub(fromOrders).withDeadlineAfter(10, TimeUnit.SECONDS)
        .getReservation(reservation), Status.Code.NOT_FOUND, "RESERVATION_NOT_FOUND");
    assertStatus(() -> ReservationServiceGrpc.newBlockingStub(fromOrders)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(scoped)).withDeadlineAfter(10, TimeUnit.SECONDS)
        .getReservation(reservation), Status.Code.PERMISSION_DENIED, "SCOPE_NOT_FROM_GATEWAY");

    Channel fromGateway = as("gateway", orders.grpcPort());
    GetOrderRequest order = GetOrderRequest.newBuilder().setOrderId("O-NONE").setConsistentRead(true).build();
    assertStatus(() -> OrderServiceGrpc.newBlockingStub(fromGateway).withDeadlineAfter(10, TimeUnit.SECONDS).getOrder(order),
        Status.Code.NOT_FOUND, "ORDER_NOT_FOUND");
    assertStatus(() -> OrderServiceGrpc.newBlockingStub(fromGateway).withInterceptors(
        MetadataUtils.newAttachHeadersInterceptor(scoped)).withDeadlineAfter(10, TimeUnit.SECONDS).getOrder(order),
        Status.Code.PERMISSION_DENIED, CallerScope.REFUSED);
  }

  @Test
  void theContainerHealthProbe_callsItsOwnService_withTheServicesOwnCertificate() throws Exception {
    try (TransportSecurity own = TransportSecurity.load(files(TlsMode.MTLS, "inventory-service", List.of(GATEWAY)))) {
      assertThat(HealthProbe.check(inventory.grpcPort(), "warehouse.inventory.v1.InventoryService",
          own.loopbackProbeCredentials())).isZero();
    }
    assertThat(HealthProbe.check(inventory.grpcPort(), "")).as("plaintext").isEqualTo(1);
  }
}
