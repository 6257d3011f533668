package dev.warehouse.gateway.auth;

import static dev.warehouse.testing.Statuses.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.RSAKey;
import dev.warehouse.gateway.GatewayConfig;
import dev.warehouse.gateway.GatewayProcess;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A key rotated in the gateway's JWKS file is accepted after the refresh period, and the retired one refused, without a restart. */
@Tag("integration")
class JwksRotationTest {

  private static final GetProductInventoryRequest READ = GetProductInventoryRequest.newBuilder().setProductId("P1")
      .setWarehouseId("W1").build();

  private static Status.Code call(ManagedChannel channel, String token) {
    try {
      InventoryServiceGrpc.newBlockingStub(ClientInterceptors.intercept(channel, BearerToken.interceptor(token)))
          .withDeadlineAfter(5, TimeUnit.SECONDS).getProductInventory(READ);
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  private static void await(ManagedChannel channel, String token, Status.Code expected) {
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> assertThat(call(channel, token)).isEqualTo(expected));
  }

  @Test
  void rotatedKey_isAcceptedAfterTheRefresh_andTheRetiredOneRefused() throws Exception {
    Path dir = Files.createTempDirectory("jwks-rotation-test");
    Path jwks = dir.resolve("jwks.json");
    RSAKey old = TestTokens.rsaKey("2026-06");
    ECKey next = TestTokens.ecKey("2026-07");
    TestTokens.writeJwks(jwks, old);
    AuthConfig auth = new AuthConfig(AuthMode.JWT, Optional.of(GatewayAuthTest.DEV_POLICY), Optional.of(jwks),
        Optional.empty(), TestTokens.ISSUER, TestTokens.AUDIENCE, AuthConfig.ACCEPTABLE_ALGORITHMS, "roles",
        AuthConfig.DEFAULT_CLOCK_SKEW, Duration.ofMillis(200), AuthConfig.DEFAULT_TOKEN_CACHE_SIZE);
    try (StandInBackend backend = StandInBackend.start();
        GatewayProcess gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of(backend.address()),
            List.of(backend.address()), Duration.ofSeconds(5), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
            GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(1)).withAuth(auth))) {
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
      try {
        String byOld = TestTokens.sign(old, TestTokens.claims("alice", Instant.now(), "debugger").build());
        String byNext = TestTokens.sign(next, TestTokens.claims("alice", Instant.now(), "debugger").build());
        await(channel, byOld, Status.Code.OK);
        assertStatus(() -> InventoryServiceGrpc.newBlockingStub(ClientInterceptors.intercept(channel,
            BearerToken.interceptor(byNext))).withDeadlineAfter(5, TimeUnit.SECONDS).getProductInventory(READ),
            Status.Code.UNAUTHENTICATED, "TOKEN_KEY_UNKNOWN");

        // Publish the next key beside the old one, then retire the old one: each takes one refresh.
        TestTokens.writeJwks(jwks, old, next);
        await(channel, byNext, Status.Code.OK);
        assertThat(call(channel, byOld)).isEqualTo(Status.Code.OK);
        TestTokens.writeJwks(jwks, next);
        await(channel, byOld, Status.Code.UNAUTHENTICATED);
        assertThat(call(channel, byNext)).isEqualTo(Status.Code.OK);
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}
