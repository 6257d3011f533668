package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.runtime.discovery.AddressLookup;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.runtime.process.GrpcServer;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The gateway follows a DNS name whose answer changes, without a restart: an instance added to the answer
 * gets calls, and one removed from it gets none, within the resolve period (plus a connection and a health
 * check), while calls go on succeeding. The name's answer is a map the test changes, as a headless Service's
 * would change; each answer is a loopback address (127.0.0.2, 127.0.0.3 …) where a real Netty server listens
 * on the one port the target names. The instance removed stays up and healthy: only the answer drops it.
 */
@Tag("integration")
class GatewayDiscoveryTest {

  private static final String NAME = "inventory-service-headless.test";
  private static final Duration PERIOD = Duration.ofSeconds(1);
  /** How long a change may take to show: the period, then connecting and a health check, on a busy machine. */
  private static final Duration WITHIN = PERIOD.plusSeconds(4);
  private static final String GET = InventoryServiceGrpc.getGetProductInventoryMethod().getFullMethodName();
  private static final String HOT_KEYS = AdminServiceGrpc.getListHotKeysMethod().getFullMethodName();

  /** The DNS answers the gateway sees, by name; other names (the literal addresses) resolve as the JVM does. */
  private final Map<String, List<InetAddress>> answers = new ConcurrentHashMap<>();
  private final AddressLookup lookup = host -> {
    List<InetAddress> answer = answers.get(host);
    return answer != null ? answer : AddressLookup.SYSTEM.lookup(host);
  };
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final ExecutorService callers = Executors.newCachedThreadPool();

  @AfterEach
  void stop() throws Exception {
    callers.shutdownNow();
    Collections.reverse(toClose);
    for (AutoCloseable closeable : toClose) {
      closeable.close();
    }
  }

  @Test
  void instancesAddedAndRemoved_fromTheDnsAnswer_areUsedAndDropped_withinThePeriod_whileCallsSucceed()
      throws Exception {
    Instance a = closing(Instance.start("127.0.0.2", 0));
    Instance b = closing(Instance.start("127.0.0.3", a.port()));
    Instance never = closing(Instance.start("127.0.0.4", a.port())); // listening, healthy, never in the answer
    Instance orders = closing(Instance.start("127.0.0.1", 0));
    answers.put(NAME, List.of(a.ip()));
    GatewayProcess gateway = gateway(PERIOD, GatewayConfig.DEFAULT_CIRCUIT_OPEN, a.port(), orders);
    ManagedChannel channel = channelTo(gateway);
    await(() -> tryGet(channel), WITHIN, "a call through the gateway succeeds");
    assertThat(a.calls(GET)).isPositive();

    Calls calls = Calls.start(channel, callers);
    int before = calls.succeeded();
    await(() -> calls.succeeded() > before + 50, WITHIN, "calls flow");
    assertThat(b.calls(GET)).as("an instance not in the answer").isZero();

    long added = System.nanoTime();
    answers.put(NAME, List.of(a.ip(), b.ip()));
    await(() -> b.calls(GET) > 0, WITHIN, "the instance added to the answer gets calls");
    Duration addedAfter = Duration.ofNanos(System.nanoTime() - added);
    hotKeys(channel);
    assertThat(List.of(a.calls(HOT_KEYS), b.calls(HOT_KEYS), orders.calls(HOT_KEYS)))
        .as("the admin endpoint asks the current instances, the one added included").containsExactly(1, 1, 1);

    long removed = System.nanoTime();
    answers.put(NAME, List.of(b.ip()));
    // Each try itself waits up to WITHIN for its 50 calls: the last try may begin just before WITHIN ends.
    await(() -> getsNoneOf(a, b, 50), WITHIN.multipliedBy(2), "the instance removed from the answer gets no more calls");
    Duration removedAfter = Duration.ofNanos(System.nanoTime() - removed);
    hotKeys(channel);
    assertThat(List.of(a.calls(HOT_KEYS), b.calls(HOT_KEYS)))
        .as("the admin endpoint no longer asks the instance removed").containsExactly(1, 2);

    int afterRemoval = calls.succeeded();
    await(() -> calls.succeeded() > afterRemoval + 50, WITHIN, "calls go on");
    calls.stop();
    assertThat(calls.failures).as("calls failed while instances came and went (of " + calls.succeeded() + ")")
        .isEmpty();
    assertThat(never.calls(GET) + never.calls(HOT_KEYS)).as("an instance never in the answer").isZero();
    System.out.printf("discovery: added instance used after %d ms, removed one dropped after %d ms (period %d ms)%n",
        addedAfter.toMillis(), removedAfter.toMillis(), PERIOD.toMillis());
  }

  @Test
  void aLostConnection_makesTheGatewayLookTheNameUpAgain_longBeforeThePeriod() throws Exception {
    Instance a = closing(Instance.start("127.0.0.2", 0));
    Instance b = closing(Instance.start("127.0.0.3", a.port()));
    Instance orders = closing(Instance.start("127.0.0.1", 0));
    answers.put(NAME, List.of(a.ip()));
    // The calls that fail until the new answer is known must not hold the circuit open past the wait below.
    GatewayProcess gateway = gateway(Duration.ofHours(1), Duration.ofMillis(200), a.port(), orders);
    ManagedChannel channel = channelTo(gateway);
    await(() -> tryGet(channel), WITHIN, "a call through the gateway succeeds");

    answers.put(NAME, List.of(b.ip())); // A is replaced, but the next periodic look-up is an hour away
    for (int i = 0; i < 20; i++) {
      assertThat(tryGet(channel)).isTrue();
    }
    assertThat(b.calls(GET)).as("no look-up yet: the new instance is unknown").isZero();

    a.close(); // its connections close: the channel asks its resolver to refresh
    await(() -> tryGet(channel) && b.calls(GET) > 0, WITHIN, "the instance in the new answer gets calls");
  }

  /** A gateway whose inventory-service is the test's name (on {@code port}), its order-service {@code orders}. */
  private GatewayProcess gateway(Duration period, Duration circuitOpen, int port, Instance orders) throws IOException {
    GatewayConfig config = new GatewayConfig(0, 0, List.of("dns:///" + NAME + ":" + port),
        List.of(orders.address()), Duration.ofSeconds(5), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET, circuitOpen,
        Duration.ZERO, Duration.ofSeconds(5)).withResolvePeriod(period);
    return closing(GatewayProcess.start(config, lookup));
  }

  private ManagedChannel channelTo(GatewayProcess gateway) {
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
    toClose.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    return channel;
  }

  private <T extends AutoCloseable> T closing(T closeable) {
    toClose.add(closeable);
    return closeable;
  }

  private static boolean tryGet(ManagedChannel channel) {
    try {
      get(channel);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static ProductInventory get(ManagedChannel channel) {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .getProductInventory(GetProductInventoryRequest.newBuilder().setProductId("P1").setWarehouseId("W1").build());
  }

  private static ListHotKeysResponse hotKeys(ManagedChannel channel) {
    ListHotKeysResponse response = AdminServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .listHotKeys(ListHotKeysRequest.getDefaultInstance());
    assertThat(response.getUnansweredInstancesList()).isEmpty();
    return response;
  }

  /** True when {@code removed} got none of the next {@code n} calls that {@code kept} got. */
  private static boolean getsNoneOf(Instance removed, Instance kept, int n) {
    int removedBefore = removed.calls(GET);
    int keptBefore = kept.calls(GET);
    await(() -> kept.calls(GET) >= keptBefore + n, WITHIN, n + " more calls reach " + kept.ip());
    return removed.calls(GET) == removedBefore;
  }

  private static void await(BooleanSupplier condition, Duration within, String what) {
    Awaitility.await(what).atMost(within).pollInterval(Duration.ofMillis(20)).until(condition::getAsBoolean);
  }

  /** Calls made one after another through the gateway until stopped, each failure recorded. */
  private static final class Calls {
    final AtomicBoolean running = new AtomicBoolean(true);
    final AtomicInteger succeeded = new AtomicInteger();
    final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    Future<?> loop;

    static Calls start(ManagedChannel channel, ExecutorService threads) {
      Calls calls = new Calls();
      calls.loop = threads.submit(() -> {
        while (calls.running.get()) {
          try {
            get(channel);
            calls.succeeded.incrementAndGet();
          } catch (RuntimeException e) {
            calls.failures.add(Status.fromThrowable(e).toString());
          }
        }
      });
      return calls;
    }

    int succeeded() {
      return succeeded.get();
    }

    void stop() throws Exception {
      running.set(false);
      loop.get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * One instance: a real Netty server on a loopback address, serving the inventory contract and the admin
   * endpoint (health SERVING for both), counting the calls of each method that reach it.
   */
  private static final class Instance implements AutoCloseable {
    private final InetAddress ip;
    private final GrpcServer server;
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private Instance(String ip, int port) throws IOException {
      this.ip = InetAddress.getByName(ip);
      ServerInterceptor counting = new ServerInterceptor() {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
          calls.computeIfAbsent(call.getMethodDescriptor().getFullMethodName(), m -> new AtomicInteger())
              .incrementAndGet();
          return next.startCall(call, headers);
        }
      };
      this.server = new GrpcServer(NettyServerBuilder.forAddress(new InetSocketAddress(this.ip, port)),
          List.of(new Inventory(), new Admin()), List.of(counting), Duration.ZERO, Duration.ofSeconds(1)).start();
    }

    static Instance start(String ip, int port) throws IOException {
      return new Instance(ip, port);
    }

    InetAddress ip() {
      return ip;
    }

    int port() {
      return server.port();
    }

    String address() {
      return ip.getHostAddress() + ":" + port();
    }

    int calls(String fullMethodName) {
      AtomicInteger count = calls.get(fullMethodName);
      return count == null ? 0 : count.get();
    }

    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        server.stop();
      }
    }
  }

  private static final class Inventory extends InventoryServiceGrpc.InventoryServiceImplBase {
    @Override
    public void getProductInventory(GetProductInventoryRequest request, StreamObserver<ProductInventory> observer) {
      observer.onNext(ProductInventory.newBuilder().setProductId(request.getProductId())
          .setWarehouseId(request.getWarehouseId()).setQuantity(7).build());
      observer.onCompleted();
    }
  }

  private static final class Admin extends AdminServiceGrpc.AdminServiceImplBase {
    @Override
    public void listHotKeys(ListHotKeysRequest request, StreamObserver<ListHotKeysResponse> observer) {
      observer.onNext(ListHotKeysResponse.getDefaultInstance());
      observer.onCompleted();
    }
  }
}
