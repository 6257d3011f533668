package dev.warehouse.gateway;

import dev.warehouse.gateway.auth.AccessPolicy;
import dev.warehouse.gateway.tools.CertsCommand;
import dev.warehouse.gateway.tools.DemoData;
import dev.warehouse.gateway.tools.DevTokens;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.runtime.discovery.AddressLookup;
import dev.warehouse.runtime.server.CdsTraining;
import dev.warehouse.runtime.server.JvmSetup;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Starts the gateway ({@code java -jar gateway.jar}), loads the demo data through a running gateway
 * ({@code java -jar gateway.jar load-demo-data [options] [host:port]}), makes the local CA and
 * certificates ({@code java -jar gateway.jar certs DIR [--renew]}), writes development credentials
 * ({@code java -jar gateway.jar dev-tokens DIR POLICY_FILE}), or makes the training run of its class-data-sharing
 * archive ({@code java -jar gateway.jar train-cds}, {@link CdsTraining}).
 */
public final class GatewayMain {

  static {
    JvmSetup.configureLogging();
    JvmSetup.configureNetty();
  }

  private static final Logger log = Logger.getLogger(GatewayMain.class.getName());

  private GatewayMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("load-demo-data")) {
      System.exit(DemoData.run(Arrays.copyOfRange(args, 1, args.length), System.out));
    }
    if (args.length > 0 && args[0].equals("certs")) {
      System.exit(CertsCommand.run(Arrays.copyOfRange(args, 1, args.length), System.out));
    }
    if (args.length > 0 && args[0].equals("dev-tokens")) {
      System.exit(DevTokens.run(Arrays.copyOfRange(args, 1, args.length), System.out));
    }
    // Before anything looks a name up: the JVM reads its cache settings once.
    AddressLookup.disableJvmCache();
    if (CdsTraining.requested(args)) {
      CdsTraining.runAndExit("gateway", GatewayMain::train);
    }
    GatewayConfig config = GatewayConfig.fromEnvironment(System.getenv());
    GatewayProcess gateway;
    try {
      gateway = GatewayProcess.start(config);
    } catch (Exception e) {
      log.log(Level.SEVERE, "event=start_failed service=gateway", e);
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(gateway::close, "graceful-shutdown"));
    gateway.awaitTermination();
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
    Path auth = training.dir().resolve("auth");
    DevTokens.write(auth, AccessPolicy.read(policy), Duration.ofHours(1), Instant.now());
    Metadata token = new Metadata();
    token.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
        "Bearer " + Files.readString(auth.resolve("training.jwt")).strip());
    Map<String, String> env = training.environment();
    String backends = training.unreachableAddress();
    env.put("INVENTORY_ADDRESSES", backends);
    env.put("ORDER_ADDRESSES", backends);
    env.put("BACKEND_TLS_MODE", "mtls");
    env.put("BACKEND_TRUSTED_PEERS", CdsTraining.IDENTITY);
    env.put("AUTH_MODE", "jwt");
    env.put("AUTH_POLICY_FILE", policy.toString());
    env.put("AUTH_JWKS_FILE", auth.resolve(DevTokens.JWKS_FILE).toString());
    env.put("AUTH_JWT_ISSUER", DevTokens.ISSUER);
    env.put("AUTH_JWT_AUDIENCE", DevTokens.AUDIENCE);
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
