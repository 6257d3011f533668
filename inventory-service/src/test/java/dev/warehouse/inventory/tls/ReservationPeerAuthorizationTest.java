package dev.warehouse.inventory.tls;

import dev.warehouse.devkit.CertsCommand;
import dev.warehouse.devkit.LocalCa;
import java.time.Instant;
import static dev.warehouse.testing.Statuses.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.InventorySettings;
import dev.warehouse.inventory.v1.GetReservationRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.runtime.tls.TlsConfig;
import dev.warehouse.runtime.tls.TlsMode;
import dev.warehouse.runtime.tls.TrustedPeers;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
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
 * The inventory-service in {@code mtls} mode admits per service, with real certificates from a test CA: the gateway (TLS_TRUSTED_PEERS) may call InventoryService and not ReservationService; the
 * order-service (RESERVATION_TRUSTED_PEERS, by default) may call ReservationService and not
 * InventoryService; health stays open to both.
 */
@Tag("integration")
class ReservationPeerAuthorizationTest {

  @TempDir
  static Path certs;
  private static ServerProcess inventory;
  private static final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    CertsCommand.ensure(certs, false, Instant.now());
    TlsConfig tls = new TlsConfig(TlsMode.MTLS, Optional.of(certs.resolve("inventory-service.pem")),
        Optional.of(certs.resolve("inventory-service-key.pem")), Optional.of(certs.resolve("ca.pem")),
        TrustedPeers.of(List.of(LocalCa.spiffeId("gateway"))), TlsConfig.DEFAULT_REFRESH)
        // As main reads RESERVATION_TRUSTED_PEERS when it is unset: the order-service alone.
        .withServicePeers(ReservationServiceGrpc.SERVICE_NAME, InventorySettings.fromEnvironment(Map.of()).reservationPeers());
    inventory = DynamoPlugin.start(TestServices.config(InventoryMain.SERVICE_NAME, TestServices.uniqueTableName())
        .withTls(tls), InventoryMain::services, List.of());
  }

  @AfterAll
  static void stop() throws Exception {
    for (ManagedChannel channel : channels) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (inventory != null) {
      inventory.close();
    }
  }

  /** A channel presenting {@code workload}'s certificate. */
  private static ManagedChannel as(String workload) throws Exception {
    ChannelCredentials credentials = TlsChannelCredentials.newBuilder().trustManager(certs.resolve("ca.pem").toFile())
        .keyManager(certs.resolve(workload + ".pem").toFile(), certs.resolve(workload + "-key.pem").toFile()).build();
    ManagedChannel channel = NettyChannelBuilder.forTarget("localhost:" + inventory.grpcPort(), credentials).build();
    channels.add(channel);
    return channel;
  }

  @Test
  void theDefaultOfReservationTrustedPeers_isTheOrderService() {
    assertThat(InventorySettings.fromEnvironment(Map.of()).reservationPeers().identities()).containsExactly(LocalCa.spiffeId("order-service"));
    assertThat(InventorySettings.fromEnvironment(Map.of("RESERVATION_TRUSTED_PEERS", "spiffe://x.test/a, spiffe://x.test/b")).reservationPeers()
        .identities()).containsExactlyInAnyOrder("spiffe://x.test/a", "spiffe://x.test/b");
  }

  /** Set but naming none would admit any certificate of the CA to the reservations: the start stops instead. */
  @Test
  void aReservationTrustedPeersNamingNone_stopsTheStart() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> InventorySettings.fromEnvironment(Map.of("RESERVATION_TRUSTED_PEERS", ",")).reservationPeers())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("RESERVATION_TRUSTED_PEERS is set but names no identity");
  }

  @Test
  void eachServiceAdmitsOnlyItsOwnCallers_andHealthAdmitsBoth() throws Exception {
    ManagedChannel gateway = as("gateway");
    ManagedChannel orders = as("order-service");
    GetReservationRequest reservation = GetReservationRequest.newBuilder().setOrderId("O1").setConsistentRead(true).build();
    GetSerialItemRequest item = GetSerialItemRequest.newBuilder().setSerialNumber("SN-1").setConsistentRead(true).build();

    // Admitted: each reaches its service (which answers NOT_FOUND: nothing is stored).
    assertStatus(() -> ReservationServiceGrpc.newBlockingStub(orders).withDeadlineAfter(10, TimeUnit.SECONDS)
        .getReservation(reservation), Status.Code.NOT_FOUND, "RESERVATION_NOT_FOUND");
    assertStatus(() -> InventoryServiceGrpc.newBlockingStub(gateway).withDeadlineAfter(10, TimeUnit.SECONDS)
        .getSerialItem(item), Status.Code.NOT_FOUND, "SERIAL_ITEM_NOT_FOUND");

    // Refused: the gateway on the internal service, the order-service on the public one.
    assertStatus(() -> ReservationServiceGrpc.newBlockingStub(gateway).withDeadlineAfter(10, TimeUnit.SECONDS)
        .getReservation(reservation), Status.Code.PERMISSION_DENIED, "PEER_NOT_TRUSTED");
    assertStatus(() -> InventoryServiceGrpc.newBlockingStub(orders).withDeadlineAfter(10, TimeUnit.SECONDS)
        .getSerialItem(item), Status.Code.PERMISSION_DENIED, "PEER_NOT_TRUSTED");

    for (ManagedChannel channel : List.of(gateway, orders)) {
      assertThat(HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
          .check(HealthCheckRequest.newBuilder().setService(ReservationServiceGrpc.SERVICE_NAME).build()).getStatus())
          .isEqualTo(ServingStatus.SERVING);
    }
  }
}
