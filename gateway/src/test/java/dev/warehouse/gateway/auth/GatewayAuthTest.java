package dev.warehouse.gateway.auth;

import static dev.warehouse.testing.Statuses.assertStatus;
import static dev.warehouse.testing.Statuses.detail;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.ErrorInfo;
import com.google.type.Money;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.gateway.GatewayConfig;
import dev.warehouse.gateway.GatewayProcess;
import dev.warehouse.inventory.v1.AdjustStockRequest;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.logging.LineEncoder;
import dev.warehouse.logging.LogFormat;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.testing.LogRecords;
import dev.warehouse.testing.MetricsScrape;
import dev.warehouse.testing.Reflection;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Callers through a real gateway (Netty, loopback) with the development policy, in front of a stand-in
 * backend that counts what reaches it: every bad credential is UNAUTHENTICATED with its reason, a
 * method the caller's roles lack is PERMISSION_DENIED, and neither reaches the backend; the right role
 * goes through; health is open; reflection is the policy's; every write leaves one audit line.
 */
@Tag("integration")
class GatewayAuthTest {

  static final Path DEV_POLICY = Path.of(System.getProperty("project.root", "..")).resolve("deploy/auth/policy.dev.yaml");

  private static final String ADJUST_STOCK = "warehouse.inventory.v1.InventoryService/AdjustStock";
  private static final String GET_PRODUCT_INVENTORY = "warehouse.inventory.v1.InventoryService/GetProductInventory";

  private static final RSAKey RSA = TestTokens.rsaKey("rsa-1");
  private static final ECKey EC = TestTokens.ecKey("ec-1");

  private static Path dir;
  private static StandInBackend backend;
  private static GatewayProcess gateway;
  private static ManagedChannel channel;
  private static LogRecords audit;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("gateway-auth-test");
    Path jwks = dir.resolve("jwks.json");
    TestTokens.writeJwks(jwks, RSA, EC);
    backend = StandInBackend.start();
    AuthConfig auth = new AuthConfig(AuthMode.JWT, Optional.of(DEV_POLICY), Optional.of(jwks), Optional.empty(),
        TestTokens.ISSUER, TestTokens.AUDIENCE, AuthConfig.ACCEPTABLE_ALGORITHMS, AuthConfig.DEFAULT_ROLES_CLAIM,
        AuthConfig.DEFAULT_CLOCK_SKEW, AuthConfig.DEFAULT_JWKS_REFRESH, AuthConfig.DEFAULT_TOKEN_CACHE_SIZE);
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of(backend.address()), List.of(backend.address()),
        Duration.ofSeconds(5), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET, GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO,
        Duration.ofSeconds(1)).withAuth(auth));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
    audit = new LogRecords(AuditTrail.class);
    // Both backends' channels, and so the whole gateway, serve once the health monitor has seen them.
    for (String service : List.of("warehouse.inventory.v1.InventoryService", "warehouse.order.v1.OrderService", "")) {
      Awaitility.await(service + " SERVING").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
          .until(() -> health(service), ServingStatus.SERVING::equals);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (audit != null) {
      audit.close();
    }
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (gateway != null) {
      gateway.close();
    }
    if (backend != null) {
      backend.close();
    }
  }

  @BeforeEach
  void clearAudit() throws InterruptedException {
    gateway.access().awaitAuditWritten(); // a refused call's line may still be queued
    audit.clear();
  }

  private static ServingStatus health(String service) {
    return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
  }

  private static String token(String subject, String... roles) {
    return TestTokens.sign(RSA, TestTokens.claims(subject, Instant.now(), roles).build());
  }

  private static Channel as(String token) {
    return ClientInterceptors.intercept(channel, BearerToken.interceptor(token));
  }

  private static Channel withAuthorization(String headerValue) {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), headerValue);
    return ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers));
  }

  private static InventoryServiceGrpc.InventoryServiceBlockingStub inventory(Channel channel) {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS);
  }

  private static final GetProductInventoryRequest READ = GetProductInventoryRequest.newBuilder().setProductId("P1")
      .setWarehouseId("W1").build();

  /** The read is refused with {@code code} and {@code reason}, and nothing reaches the backend. */
  private static void assertRefused(Channel caller, Status.Code code, String reason) {
    int before = backend.calls();
    assertStatus(() -> inventory(caller).getProductInventory(READ), code, reason);
    assertThat(backend.calls()).as("calls that reached the backend").isEqualTo(before);
  }

  @Test
  void noCredential_isUnauthenticated_andNeverReachesTheBackend() {
    double before = refused("authentication", "CREDENTIALS_MISSING");
    assertRefused(channel, Status.Code.UNAUTHENTICATED, "CREDENTIALS_MISSING");
    // Refused before the gRPC timers start: counted here, or a broken JWKS would leave every SLO green.
    assertThat(refused("authentication", "CREDENTIALS_MISSING")).isEqualTo(before + 1);
    StatusRuntimeException e = failure(() -> inventory(channel).getProductInventory(READ));
    ErrorInfo info = detail(e, ErrorInfo.class);
    assertThat(info.getDomain()).isEqualTo(GrpcErrors.ERROR_DOMAIN);
    assertThat(e.getStatus().getDescription()).contains("authorization: Bearer");
  }

  @Test
  void malformedAuthorization_isUnauthenticated() {
    assertRefused(withAuthorization("Basic dXNlcjpwYXNz"), Status.Code.UNAUTHENTICATED, "TOKEN_MALFORMED");
    assertRefused(withAuthorization("Bearer not-a-jwt"), Status.Code.UNAUTHENTICATED, "TOKEN_MALFORMED");
    assertRefused(withAuthorization("Bearer"), Status.Code.UNAUTHENTICATED, "TOKEN_MALFORMED");
  }

  @Test
  void expiredToken_isUnauthenticated() {
    Instant now = Instant.now();
    JWTClaimsSet expired = TestTokens.claims("alice", now, "debugger")
        .issueTime(java.util.Date.from(now.minus(Duration.ofHours(1))))
        .notBeforeTime(java.util.Date.from(now.minus(Duration.ofHours(1))))
        .expirationTime(java.util.Date.from(now.minus(Duration.ofMinutes(5)))).build();
    assertRefused(as(TestTokens.sign(RSA, expired)), Status.Code.UNAUTHENTICATED, "TOKEN_EXPIRED");
  }

  @Test
  void notYetValidToken_isUnauthenticated() {
    Instant now = Instant.now();
    JWTClaimsSet early = TestTokens.claims("alice", now, "debugger")
        .notBeforeTime(java.util.Date.from(now.plus(Duration.ofMinutes(5))))
        .expirationTime(java.util.Date.from(now.plus(Duration.ofMinutes(15)))).build();
    assertRefused(as(TestTokens.sign(RSA, early)), Status.Code.UNAUTHENTICATED, "TOKEN_NOT_YET_VALID");
  }

  @Test
  void wrongAudience_isUnauthenticated() {
    JWTClaimsSet other = TestTokens.claims("alice", Instant.now(), "debugger").audience("another-service").build();
    assertRefused(as(TestTokens.sign(RSA, other)), Status.Code.UNAUTHENTICATED, "TOKEN_AUDIENCE_REJECTED");
  }

  @Test
  void wrongIssuer_isUnauthenticated() {
    JWTClaimsSet other = TestTokens.claims("alice", Instant.now(), "debugger").issuer("https://evil.test").build();
    assertRefused(as(TestTokens.sign(RSA, other)), Status.Code.UNAUTHENTICATED, "TOKEN_ISSUER_REJECTED");
  }

  @Test
  void wrongSignature_isUnauthenticated() {
    JWTClaimsSet claims = TestTokens.claims("alice", Instant.now(), "admin").build();
    assertRefused(as(TestTokens.forged(RSA, claims)), Status.Code.UNAUTHENTICATED, "TOKEN_SIGNATURE_INVALID");
    assertRefused(as(TestTokens.forged(EC, claims)), Status.Code.UNAUTHENTICATED, "TOKEN_SIGNATURE_INVALID");
    // A good token with its payload swapped for another's: the signature no longer covers it.
    String good = token("alice", "debugger");
    String admin = token("alice", "admin");
    String[] goodParts = good.split("\\.");
    String[] adminParts = admin.split("\\.");
    assertRefused(as(goodParts[0] + "." + adminParts[1] + "." + goodParts[2]), Status.Code.UNAUTHENTICATED,
        "TOKEN_SIGNATURE_INVALID");
  }

  @Test
  void keyNotInTheJwks_isUnauthenticated() {
    String stranger = TestTokens.sign(TestTokens.rsaKey("rsa-unknown"), TestTokens.claims("alice", Instant.now(), "admin").build());
    assertRefused(as(stranger), Status.Code.UNAUTHENTICATED, "TOKEN_KEY_UNKNOWN");
  }

  @Test
  void algNone_andSharedSecretAlgorithms_areUnauthenticated() {
    JWTClaimsSet claims = TestTokens.claims("alice", Instant.now(), "admin").build();
    assertRefused(as(TestTokens.unsecured(claims)), Status.Code.UNAUTHENTICATED, "TOKEN_ALGORITHM_REJECTED");
    assertRefused(as(TestTokens.hmac(RSA.getKeyID(), claims)), Status.Code.UNAUTHENTICATED, "TOKEN_ALGORITHM_REJECTED");
  }

  @Test
  void tokenWithoutSubject_isUnauthenticated() {
    JWTClaimsSet anonymous = TestTokens.claims("alice", Instant.now(), "admin").subject(null).build();
    assertRefused(as(TestTokens.sign(RSA, anonymous)), Status.Code.UNAUTHENTICATED, "TOKEN_CLAIMS_REJECTED");
  }

  @Test
  void roleWithoutTheMethod_isPermissionDenied_andTheBackendReceivesNothing() {
    int before = backend.calls(ADJUST_STOCK);
    double refusedBefore = refused("authorization", "METHOD_NOT_ALLOWED");
    StatusRuntimeException e = failure(() -> inventory(as(token("dora", "debugger"))).adjustStock(
        AdjustStockRequest.newBuilder().setProductId("P1").setWarehouseId("W1").setDelta(-1).setRequestId("r-1").build()));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    ErrorInfo info = detail(e, ErrorInfo.class);
    assertThat(info.getReason()).isEqualTo("METHOD_NOT_ALLOWED");
    assertThat(info.getDomain()).isEqualTo(GrpcErrors.ERROR_DOMAIN);
    assertThat(info.getMetadataMap()).containsEntry("method", ADJUST_STOCK);
    assertThat(backend.calls(ADJUST_STOCK)).isEqualTo(before);
    // No role at all: authenticated, allowed nothing.
    assertRefused(as(token("nobody")), Status.Code.PERMISSION_DENIED, "METHOD_NOT_ALLOWED");
    assertRefused(as(token("nobody", "root")), Status.Code.PERMISSION_DENIED, "METHOD_NOT_ALLOWED");
    assertThat(refused("authorization", "METHOD_NOT_ALLOWED")).isEqualTo(refusedBefore + 3);
  }

  /** The gateway's count of calls refused by {@code check} for {@code reason}, as Prometheus scrapes it (0 before any). */
  private static double refused(String check, String reason) {
    return MetricsScrape.scrape(gateway.metricsPort()).lines()
        .filter(line -> line.startsWith("gateway_access_refused_total{") && line.contains("check=\"" + check + "\"")
            && line.contains("reason=\"" + reason + "\""))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .sum();
  }

  @Test
  void rightRole_goesThrough_withEitherAllowedAlgorithm() {
    int before = backend.calls(ADJUST_STOCK);
    ProductInventory after = inventory(as(token("pat", "picker"))).adjustStock(AdjustStockRequest.newBuilder()
        .setProductId("P1").setWarehouseId("W1").setDelta(-3).setRequestId("r-2").build());
    assertThat(after.getQuantity()).isEqualTo(7);
    assertThat(backend.calls(ADJUST_STOCK)).isEqualTo(before + 1);

    int reads = backend.calls(GET_PRODUCT_INVENTORY);
    String ecToken = TestTokens.sign(EC, TestTokens.claims("dora", Instant.now(), "debugger").build());
    assertThat(inventory(as(ecToken)).getProductInventory(READ).getQuantity()).isEqualTo(7);
    assertThat(backend.calls(GET_PRODUCT_INVENTORY)).isEqualTo(reads + 1);
  }

  @Test
  void health_isOpen_withoutCredentials_andWhateverIsSent() {
    assertThat(health("warehouse.order.v1.OrderService")).isEqualTo(ServingStatus.SERVING);
    assertThat(HealthGrpc.newBlockingStub(withAuthorization("Bearer garbage")).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void reflection_needsARoleThatThePolicyGivesIt() throws Exception {
    ServerReflectionRequest list = ServerReflectionRequest.newBuilder().setListServices("").build();
    assertThat(Status.fromThrowable(catchFailure(() -> Reflection.ask(channel, list))).getCode())
        .isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(Status.fromThrowable(catchFailure(() -> Reflection.ask(as(token("pat", "picker")), list))).getCode())
        .isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(Reflection.ask(as(token("dora", "debugger")), list).getListServicesResponse().getServiceList())
        .extracting(s -> s.getName()).contains("warehouse.inventory.v1.InventoryService", "grpc.health.v1.Health");
  }

  @Test
  void adminService_isThePolicys_aDebuggerReadsIt_aPickerMayNot() {
    assertStatus(() -> AdminServiceGrpc.newBlockingStub(as(token("pat", "picker"))).withDeadlineAfter(5, TimeUnit.SECONDS)
        .listHotKeys(ListHotKeysRequest.getDefaultInstance()), Status.Code.PERMISSION_DENIED, "METHOD_NOT_ALLOWED");
    // The stand-in serves no admin service: past authorization, the gateway answers that no instance did.
    StatusRuntimeException e = failure(() -> AdminServiceGrpc.newBlockingStub(as(token("dora", "debugger")))
        .withDeadlineAfter(5, TimeUnit.SECONDS).listHotKeys(ListHotKeysRequest.getDefaultInstance()));
    assertThat(e.getStatus().getCode()).isNotIn(Status.Code.PERMISSION_DENIED, Status.Code.UNAUTHENTICATED);
  }

  @Test
  void everyWrite_leavesOneAuditLine_withCallerMethodIdsAndStatus_andNeverTheToken() throws Exception {
    String picker = token("pat", "picker");
    inventory(as(picker)).adjustStock(AdjustStockRequest.newBuilder().setProductId("P100").setWarehouseId("W1")
        .setDelta(-1).setRequestId("pick-0001").build());
    inventory(as(picker)).getProductInventory(READ); // a read: no line
    List<LogRecords.Logged> lines = audit.await(1);
    assertThat(lines).hasSize(1);
    assertThat(lines.get(0).level()).isEqualTo("INFO");
    assertThat(lines.get(0).fields()).containsEntry("event", "audit").containsEntry("caller", "pat")
        .containsEntry("auth", "jwt").containsEntry("roles", "picker").containsEntry("method", ADJUST_STOCK)
        .containsEntry("product_id", "P100").containsEntry("request_id", "pick-0001").containsEntry("status", "OK")
        .containsKeys("peer", "duration_ms");
    assertThat(lines.get(0).fields().get("peer")).asString().startsWith("127.0.0.1:");
    assertThat(lines.get(0).fields().get("duration_ms")).isInstanceOf(Double.class);
    assertThat(lines.get(0).toString()).doesNotContain(picker).doesNotContain(picker.split("\\.")[2])
        .doesNotContain("Bearer");

    gateway.access().awaitAuditWritten(); // every line of the calls above is in
    audit.clear();
    String buyer = token("bea", "buyer");
    inventory(as(buyer)).putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory
        .newBuilder().setProductId("P7").setWarehouseId("W2").setQuantity(3)).build());
    assertThat(audit.await(1)).singleElement().extracting(LogRecords.Logged::fields)
        .satisfies(fields -> assertThat(fields).containsEntry("caller", "bea").containsEntry("product_id", "P7")
            .containsEntry("status", "OK"));

    gateway.access().awaitAuditWritten(); // every line of the calls above is in
    audit.clear();
    OrderServiceGrpc.newBlockingStub(as(token("sam", "storefront"))).withDeadlineAfter(5, TimeUnit.SECONDS)
        .placeOrder(PlaceOrderRequest.newBuilder().setCustomerId("C1").setRequestId("r-9")
            .setTotal(Money.newBuilder().setCurrencyCode("EUR").setUnits(3)).build());
    assertThat(audit.await(1)).singleElement().extracting(LogRecords.Logged::fields)
        .satisfies(fields -> assertThat(fields).containsEntry("method", "warehouse.order.v1.OrderService/PlaceOrder")
            .containsEntry("request_id", "r-9").containsEntry("customer_id", "C1"));
  }

  @Test
  void auditLines_recordFailuresAndRefusals_withTheirReasons() throws Exception {
    AdjustStockRequest tooMuch = AdjustStockRequest.newBuilder().setProductId("P100").setWarehouseId("W1")
        .setDelta(-50).setRequestId("pick-0002").build();
    assertStatus(() -> inventory(as(token("pat", "picker"))).adjustStock(tooMuch), Status.Code.FAILED_PRECONDITION,
        "INSUFFICIENT_STOCK");
    assertStatus(() -> inventory(as(token("dora", "debugger"))).adjustStock(tooMuch), Status.Code.PERMISSION_DENIED,
        "METHOD_NOT_ALLOWED");
    assertStatus(() -> inventory(channel).adjustStock(tooMuch), Status.Code.UNAUTHENTICATED, "CREDENTIALS_MISSING");
    List<LogRecords.Logged> lines = audit.await(3);
    assertThat(lines).hasSize(3);
    assertThat(lines.get(0).fields()).containsEntry("caller", "pat").containsEntry("request_id", "pick-0002")
        .containsEntry("status", "FAILED_PRECONDITION").containsEntry("reason", "INSUFFICIENT_STOCK");
    assertThat(lines.get(1).fields()).containsEntry("caller", "dora").containsEntry("roles", "debugger")
        .containsEntry("method", ADJUST_STOCK).containsEntry("status", "PERMISSION_DENIED")
        .containsEntry("reason", "METHOD_NOT_ALLOWED");
    assertThat(lines.get(2).fields()).containsEntry("caller", "-").containsEntry("auth", "-")
        .containsEntry("status", "UNAUTHENTICATED").containsEntry("reason", "CREDENTIALS_MISSING");
  }

  @Test
  void auditLines_cannotBeForgedByARequestsValues() throws Exception {
    String forged = "x status=OK\nevent=audit caller=admin";
    assertThat(inventory(as(token("pat", "picker"))).adjustStock(AdjustStockRequest.newBuilder().setProductId("P1")
        .setWarehouseId("W1").setDelta(1).setRequestId(forged).build()).getQuantity()).isEqualTo(11);
    LogRecords.Logged event = audit.await(1).get(0);
    // The value is one field, as sent: the encoder escapes it (LineEncoderTest), so it adds no field and no line.
    assertThat(event.fields()).containsEntry("request_id", forged).containsEntry("status", "OK")
        .containsEntry("caller", "pat");
    String line = new LineEncoder(LogFormat.JSON).line(event.raw());
    assertThat(line).endsWith("}\n").containsOnlyOnce("\n").containsOnlyOnce("\"event\":")
        .contains("\"request_id\":\"x status=OK\\nevent=audit caller=admin\"");
  }

  private static Throwable catchFailure(ThrowingCallable call) {
    Throwable t = org.assertj.core.api.Assertions.catchThrowable(call);
    assertThat(t).as("the call should fail").isNotNull();
    return t instanceof java.util.concurrent.ExecutionException ? t.getCause() : t;
  }
}
