package dev.warehouse.gateway.auth;

import static dev.warehouse.testing.Statuses.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.jwk.RSAKey;
import dev.warehouse.gateway.GatewayProcess;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.runtime.process.GrpcServer;
import dev.warehouse.testing.LogRecords;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Callers known by their TLS client certificate: the gateway's access control (the production wiring,
 * {@link GatewayAccess}) on a real Netty TLS server that asks for, and does not require, a client
 * certificate, as the gateway will serve once TLS is on. The certificate's one SPIFFE URI SAN is the
 * identity, and the policy's {@code identities} give it its roles.
 */
@Tag("integration")
class ClientCertificateAuthTest {

  private static final String CLIENT = "spiffe://warehouse.local/client"; // admin in the development policy
  private static final AdjustStockRequest WRITE = AdjustStockRequest.newBuilder().setProductId("P1").setWarehouseId("W1")
      .setDelta(1).setRequestId("r-1").build();

  private static TestPki pki;
  private static GatewayAccess access;
  private static GrpcServer server;
  private static RSAKey signingKey;
  private static LogRecords audit;
  private final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    pki = new TestPki();
    Path jwks = Files.createTempDirectory("client-cert-test").resolve("jwks.json");
    signingKey = TestTokens.rsaKey("rsa-1");
    TestTokens.writeJwks(jwks, signingKey);
    AuthConfig config = new AuthConfig(AuthMode.JWT, Optional.of(GatewayAuthTest.DEV_POLICY), Optional.of(jwks),
        Optional.empty(), TestTokens.ISSUER, TestTokens.AUDIENCE, AuthConfig.ACCEPTABLE_ALGORITHMS, "roles",
        AuthConfig.DEFAULT_CLOCK_SKEW, AuthConfig.DEFAULT_JWKS_REFRESH, AuthConfig.DEFAULT_TOKEN_CACHE_SIZE);
    access = GatewayAccess.start(config, Clock.systemUTC(), GatewayProcess.servedServices(),
        List.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")),
        new SimpleMeterRegistry());
    TestPki.Issued serverCertificate = pki.server();
    TlsServerCredentials.Builder tls = TlsServerCredentials.newBuilder()
        .keyManager(serverCertificate.keyManagers())
        .trustManager(pki.trustManagers())
        .clientAuth(TlsServerCredentials.ClientAuth.OPTIONAL);
    server = new GrpcServer(access.install(NettyServerBuilder.forPort(0, tls.build())),
        List.of(new StandInBackend.Inventory()), List.of(), Duration.ZERO, Duration.ofSeconds(1)).start();
    audit = new LogRecords(AuditTrail.class);
  }

  @AfterAll
  static void stop() {
    if (audit != null) {
      audit.close();
    }
    if (server != null) {
      server.stop();
    }
    if (access != null) {
      access.close();
    }
  }

  @AfterEach
  void closeChannels() throws InterruptedException {
    for (ManagedChannel channel : channels) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    access.awaitAuditWritten(); // a refused call's line may still be queued
    audit.clear();
  }

  /** A TLS channel presenting a certificate with {@code uris} as its URI SANs; none presents no certificate. */
  private ManagedChannel channel(String... uris) throws Exception {
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder().trustManager(pki.trustManagers());
    if (uris.length > 0) {
      tls.keyManager(pki.client(uris).keyManagers());
    }
    ManagedChannel channel = NettyChannelBuilder.forAddress("localhost", server.port(), tls.build()).build();
    channels.add(channel);
    return channel;
  }

  private static InventoryServiceGrpc.InventoryServiceBlockingStub inventory(Channel channel) {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS);
  }

  @Test
  void aMappedIdentity_getsItsRoles_andTheAuditLineNamesIt() throws Exception {
    assertThat(inventory(channel(CLIENT)).adjustStock(WRITE).getQuantity()).isEqualTo(11);
    assertThat(audit.await(1)).hasSize(1);
    assertThat(audit.events().get(0).fields()).containsEntry("caller", CLIENT).containsEntry("auth", "mtls").containsEntry("roles", "admin")
        .containsEntry("status", "OK");
  }

  @Test
  void anIdentityThePolicyDoesNotName_isAllowedNothing() throws Exception {
    assertStatus(() -> inventory(channel("spiffe://warehouse.local/stranger")).adjustStock(WRITE),
        Status.Code.PERMISSION_DENIED, "METHOD_NOT_ALLOWED");
  }

  @Test
  void noCertificate_orOneWithoutExactlyOneUri_isUnauthenticated_butHealthAnswers() throws Exception {
    assertStatus(() -> inventory(channel()).adjustStock(WRITE), Status.Code.UNAUTHENTICATED, "CREDENTIALS_MISSING");
    assertStatus(() -> inventory(channel(CLIENT, "spiffe://warehouse.local/other")).adjustStock(WRITE),
        Status.Code.UNAUTHENTICATED, "CREDENTIALS_MISSING");
    assertThat(HealthGrpc.newBlockingStub(channel()).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void aBearerToken_decides_evenOnAConnectionWithACertificate() throws Exception {
    ManagedChannel admin = channel(CLIENT);
    String debugger = TestTokens.sign(signingKey, TestTokens.claims("dora", Instant.now(), "debugger").build());
    assertStatus(() -> inventory(ClientInterceptors.intercept(admin, BearerToken.interceptor(debugger))).adjustStock(WRITE),
        Status.Code.PERMISSION_DENIED, "METHOD_NOT_ALLOWED");
    assertStatus(() -> inventory(ClientInterceptors.intercept(admin, BearerToken.interceptor("not-a-jwt"))).adjustStock(WRITE),
        Status.Code.UNAUTHENTICATED, "TOKEN_MALFORMED");
  }
}
