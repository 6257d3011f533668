package dev.warehouse.gateway;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.runtime.discovery.AddressLookup;
import dev.warehouse.runtime.process.CdsTraining;
import dev.warehouse.runtime.process.JvmSetup;
import dev.warehouse.runtime.process.ProcessMain;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Starts the gateway ({@code java -jar gateway.jar}), or makes the training run of its class-data-sharing archive
 * ({@code java -jar gateway.jar train-cds}, {@link CdsTraining}). The development stack's certificates, tokens and
 * demo data are the dev kit's ({@code dev-kit.jar}), not the gateway's.
 */
public final class GatewayMain {

  static {
    JvmSetup.configureLogging();
    JvmSetup.configureNetty();
  }

  private static final String TRAINING_ISSUER = "cds-training";
  private static final String TRAINING_AUDIENCE = "cds-training";

  private GatewayMain() {}

  public static void main(String[] args) throws Exception {
    // Before anything looks a name up: the JVM reads its cache settings once.
    AddressLookup.disableJvmCache();
    if (CdsTraining.requested(args)) {
      CdsTraining.runAndExit("gateway", GatewayMain::train);
    }
    GatewayConfig config = GatewayConfig.fromEnvironment(System.getenv());
    ProcessMain.serve("gateway", () -> GatewayProcess.start(config).process());
  }

  /**
   * The training run of the class-data-sharing archive ({@link CdsTraining}): the start as {@code main}'s, with
   * tokens checked against a JWKS file and mutual TLS to the backends, the container's probe, then a call of
   * each contract with a token, forwarded to backends that are not there.
   */
  static void train(CdsTraining training) throws Exception {
    Path policy = training.dir().resolve("policy.yaml");
    Files.writeString(policy, "roles:\n  training:\n"
        + "    - " + InventoryServiceGrpc.SERVICE_NAME + "/GetProductInventory\n"
        + "    - " + OrderServiceGrpc.SERVICE_NAME + "/GetOrder\n");
    // A throwaway key: its JWKS for the gateway to read, one token for the calls; the key dies with the run.
    ECKey key = new ECKeyGenerator(Curve.P_256).keyID("cds-training").algorithm(JWSAlgorithm.ES256).generate();
    Path jwks = Files.writeString(training.dir().resolve("jwks.json"), new JWKSet(key.toPublicJWK()).toString());
    Instant now = Instant.now();
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(key.getKeyID()).build(),
        new JWTClaimsSet.Builder().issuer(TRAINING_ISSUER).audience(TRAINING_AUDIENCE).subject("cds-training")
            .claim("roles", List.of("training")).issueTime(Date.from(now)).expirationTime(Date.from(now.plus(Duration.ofHours(1))))
            .build());
    jwt.sign(new ECDSASigner(key));
    Metadata token = new Metadata();
    token.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + jwt.serialize());
    Map<String, String> env = training.environment();
    String backends = training.unreachableAddress();
    env.put("INVENTORY_ADDRESSES", backends);
    env.put("ORDER_ADDRESSES", backends);
    env.put("BACKEND_TLS_MODE", "mtls");
    env.put("INVENTORY_TRUSTED_PEERS", CdsTraining.IDENTITY);
    env.put("ORDER_TRUSTED_PEERS", CdsTraining.IDENTITY);
    env.put("AUTH_MODE", "jwt");
    env.put("AUTH_POLICY_FILE", policy.toString());
    env.put("AUTH_JWKS_FILE", jwks.toString());
    env.put("AUTH_JWT_ISSUER", TRAINING_ISSUER);
    env.put("AUTH_JWT_AUDIENCE", TRAINING_AUDIENCE);
    try (GatewayProcess gateway = GatewayProcess.start(GatewayConfig.fromEnvironment(env))) {
      training.probe(gateway.grpcPort());
      training.call(gateway.grpcPort(), List.of(
          channel -> InventoryServiceGrpc.newBlockingStub(channel)
              .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(token))
              .withDeadlineAfter(CdsTraining.CALL_DEADLINE_MS, TimeUnit.MILLISECONDS)
              .getProductInventory(GetProductInventoryRequest.newBuilder().setProductId("P1").setWarehouseId("W1").build()),
          channel -> OrderServiceGrpc.newBlockingStub(channel)
              .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(token))
              .withDeadlineAfter(CdsTraining.CALL_DEADLINE_MS, TimeUnit.MILLISECONDS)
              .getOrder(GetOrderRequest.newBuilder().setOrderId("O1").build())));
    }
  }
}
