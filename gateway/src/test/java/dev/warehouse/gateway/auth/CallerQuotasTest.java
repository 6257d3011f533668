package dev.warehouse.gateway.auth;

import static dev.warehouse.testing.Statuses.detail;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.rpc.ErrorInfo;
import com.google.rpc.QuotaFailure;
import com.google.rpc.RetryInfo;
import dev.warehouse.gateway.auth.QuotaPolicy.Quota;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.testing.LogRecords;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Each caller's quota, on a real server on loopback with a clock the test steps: a caller past its rate or its
 * share of calls in flight is refused (RESOURCE_EXHAUSTED, QUOTA_EXCEEDED, a QuotaFailure naming it and a
 * RetryInfo of when a call would pass) while another caller is served; a caller named in the policy has its own
 * quota; a refused read is audited. Who calls comes from a test header, as authentication would put it.
 */
class CallerQuotasTest {

  private static final Metadata.Key<String> WHO = Metadata.Key.of("x-test-caller", Metadata.ASCII_STRING_MARSHALLER);
  /** 10 calls a second, 3 at once after a pause, 2 in flight. */
  private static final Quota DEFAULT = new Quota(10, 3, 2);

  private final AtomicLong now = new AtomicLong(TimeUnit.SECONDS.toNanos(100));
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final AtomicInteger served = new AtomicInteger();
  /** Calls that reached the service's handler: admitted past the quota. */
  private final AtomicInteger arrived = new AtomicInteger();
  private volatile CountDownLatch gate = new CountDownLatch(0);
  private Server server;
  private ManagedChannel channel;

  private void start(QuotaPolicy policy) throws Exception {
    AuditTrail audit = AuditTrail.of(List.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService")));
    CallerQuotas quotas = new CallerQuotas(policy, audit, meters, now::get);
    ServerInterceptor authenticated = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        Caller caller = new Caller(headers.get(WHO), "jwt", Set.of("storefront"));
        return Contexts.interceptCall(Context.current().withValue(Caller.CONTEXT_KEY, caller), call, headers, next);
      }
    };
    OrderServiceGrpc.OrderServiceImplBase orders = new OrderServiceGrpc.OrderServiceImplBase() {
      @Override
      public void getOrder(GetOrderRequest request, StreamObserver<Order> answer) {
        arrived.incrementAndGet();
        CompletableFuture.runAsync(() -> {
          try {
            gate.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          served.incrementAndGet();
          answer.onNext(Order.newBuilder().setOrderId(request.getOrderId()).build());
          answer.onCompleted();
        });
      }
    };
    // The last interceptor given runs first: the caller is known before the quota is looked up.
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(ServerInterceptors.intercept(orders, audit, quotas, authenticated)).build().start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    gate.countDown();
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private OrderServiceGrpc.OrderServiceBlockingStub as(String caller) {
    Metadata headers = new Metadata();
    headers.put(WHO, caller);
    return OrderServiceGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private static GetOrderRequest get(String id) {
    return GetOrderRequest.newBuilder().setOrderId(id).build();
  }

  @Test
  void aCallerPastItsRate_isRefusedWithItsQuota_whileAnotherCallerIsServed() throws Exception {
    start(new QuotaPolicy(Optional.of(DEFAULT), Map.of()));
    for (int i = 0; i < 3; i++) {
      assertThat(as("flooder").getOrder(get("O-" + i)).getOrderId()).isEqualTo("O-" + i);
    }

    StatusRuntimeException refused = failure(() -> as("flooder").getOrder(get("O-3")));
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    ErrorInfo info = detail(refused, ErrorInfo.class);
    assertThat(info.getReason()).isEqualTo("QUOTA_EXCEEDED");
    assertThat(info.getMetadataMap()).containsEntry("limit", "rate").containsEntry("retry_after_ms", "100");
    assertThat(detail(refused, QuotaFailure.class).getViolationsList()).singleElement().satisfies(violation -> {
      assertThat(violation.getSubject()).isEqualTo("caller:flooder");
      assertThat(violation.getDescription()).isEqualTo("rate 10/s, burst 3, concurrency 2");
    });
    assertThat(detail(refused, RetryInfo.class).getRetryDelay().getNanos()).isEqualTo(100_000_000);
    assertThat(served).as("the refused call was never served").hasValue(3);

    assertThat(as("polite").getOrder(get("P-1")).getOrderId()).as("another caller's own quota").isEqualTo("P-1");
    now.addAndGet(TimeUnit.MILLISECONDS.toNanos(100)); // one call's worth of the rate
    assertThat(as("flooder").getOrder(get("O-4")).getOrderId()).isEqualTo("O-4");
    assertThat(meters.get("gateway.quota.refusals").tag("limit", "rate").counter().count()).isEqualTo(1.0);
  }

  @Test
  void aCallerWithItsShareInFlight_isRefusedUntilOneEnds() throws Exception {
    start(new QuotaPolicy(Optional.of(new Quota(1000, 1000, 2)), Map.of()));
    gate = new CountDownLatch(1);
    List<CompletableFuture<Order>> held = List.of(
        CompletableFuture.supplyAsync(() -> as("flooder").getOrder(get("O-1"))),
        CompletableFuture.supplyAsync(() -> as("flooder").getOrder(get("O-2"))));
    // Both reached the handler, so both hold the caller's share; counted there rather than probed with calls, which
    // could take a share themselves before the held calls arrive (a loaded machine's flake).
    Awaitility.await("both calls in flight").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
        .until(() -> arrived.get() >= 2);

    StatusRuntimeException refused = failure(() -> as("flooder").getOrder(get("O-3")));
    assertThat(detail(refused, ErrorInfo.class).getMetadataMap()).containsEntry("limit", "concurrency");
    assertThat(detail(refused, RetryInfo.class).getRetryDelay().getNanos())
        .isEqualTo((int) CallerQuotas.CONCURRENCY_RETRY_AFTER.toNanos());

    gate.countDown();
    assertThat(held).allSatisfy(call -> assertThat(call.get(20, TimeUnit.SECONDS).getOrderId()).startsWith("O-"));
    assertThat(as("flooder").getOrder(get("O-4")).getOrderId()).as("a share given back").isEqualTo("O-4");
  }

  @Test
  void aCallerThePolicyNames_hasItsOwnQuota_andOthersTheDefault() throws Exception {
    start(new QuotaPolicy(Optional.of(new Quota(1, 1, 10)), Map.of("vip", new Quota(1, 5, 10))));
    for (int i = 0; i < 5; i++) {
      as("vip").getOrder(get("V-" + i));
    }
    as("someone").getOrder(get("S-1"));
    assertThat(failure(() -> as("someone").getOrder(get("S-2"))).getStatus().getCode())
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(failure(() -> as("vip").getOrder(get("V-5"))).getStatus().getCode())
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
  }

  @Test
  void aReadRefusedForItsQuota_isAudited() throws Exception {
    start(new QuotaPolicy(Optional.of(new Quota(1, 1, 10)), Map.of()));
    as("flooder").getOrder(get("O-1"));
    try (LogRecords audit = new LogRecords(AuditTrail.class)) {
      assertThatThrownBy(() -> as("flooder").getOrder(get("O-2"))).isInstanceOf(StatusRuntimeException.class);
      assertThat(audit.await(1)).singleElement().extracting(LogRecords.Logged::fields).satisfies(fields ->
          assertThat(fields).containsEntry("event", "audit").containsEntry("caller", "flooder")
              .containsEntry("method", "warehouse.order.v1.OrderService/GetOrder")
              .containsEntry("status", "RESOURCE_EXHAUSTED").containsEntry("reason", "QUOTA_EXCEEDED")
              .containsEntry("limit", "rate"));
    }
  }

  @Test
  void thePolicyFilesQuotas_areReadWithTheirDefault_andMistakesNamed() {
    AccessPolicy policy = AccessPolicy.parse("""
        roles: {storefront: [warehouse.order.v1.OrderService/GetOrder]}
        quotas:
          default: {rate: 50, burst: 100, concurrency: 20}
          callers:
            storefront-eu: {rate: 400.5, burst: 800, concurrency: 100}
        """);
    assertThat(policy.quotas().of("anyone")).contains(new Quota(50, 100, 20));
    assertThat(policy.quotas().of("storefront-eu")).contains(new Quota(400.5, 800, 100));
    assertThat(AccessPolicy.parse("roles: {storefront: []}").quotas()).isEqualTo(QuotaPolicy.NONE);
    assertThatThrownBy(() -> AccessPolicy.parse("""
        roles: {storefront: []}
        quotas:
          default: {rate: 0, burst: 100, concurrency: 20}
          callers: {bot: {rate: 5}}
          other: 1
        """)).hasMessageContaining("quotas: unknown key 'other'").hasMessageContaining("quotas.default")
        .hasMessageContaining("quotas.callers.bot");
  }
}
