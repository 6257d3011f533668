package dev.warehouse.runtime.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.testing.Patience;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Stopping drains: health turns NOT_SERVING while calls are still served for the drain delay; then new
 * calls are refused, calls in flight finish, and the server is gone.
 */
@Tag("integration")
class GracefulShutdownTest {

  private static final Duration DRAIN = Duration.ofMillis(1500);
  private static final String SERVICE = InventoryServiceGrpc.SERVICE_NAME;

  /** Answers at once, except serial numbers starting with HOLD, which it answers when released. */
  private static final class HoldingInventory extends InventoryServiceGrpc.InventoryServiceImplBase {
    final CountDownLatch held = new CountDownLatch(1);
    final CompletableFuture<Void> release = new CompletableFuture<>();

    @Override
    public void getSerialItem(GetSerialItemRequest request, StreamObserver<SerialItem> observer) {
      Runnable answer = () -> {
        observer.onNext(SerialItem.newBuilder().setSerialNumber(request.getSerialNumber()).build());
        observer.onCompleted();
      };
      if (request.getSerialNumber().startsWith("HOLD")) {
        held.countDown();
        release.thenRun(answer);
      } else {
        answer.run();
      }
    }
  }

  /** Stands in for the drain's sleep: reports that the drain began, and ends it when the test says. */
  private static final class GatedSleeper implements GrpcServer.Sleeper {
    final CountDownLatch draining = new CountDownLatch(1);
    final CountDownLatch endDrain = new CountDownLatch(1);
    volatile Duration asked;

    @Override
    public void sleep(Duration duration) throws InterruptedException {
      asked = duration;
      draining.countDown();
      endDrain.await();
    }
  }

  /** The blocking calls and stop() run here, each on a thread of its own. */
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final HoldingInventory inventory = new HoldingInventory();
  private final GatedSleeper sleeper = new GatedSleeper();
  private GrpcServer server;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    server = new GrpcServer(NettyServerBuilder.forPort(0), List.of(inventory), List.of(), DRAIN,
        Duration.ofSeconds(10), sleeper).start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
  }

  @AfterEach
  void stop() {
    sleeper.endDrain.countDown();
    inventory.release.complete(null);
    channel.shutdownNow();
    server.stop();
    threads.shutdownNow();
  }

  private InventoryServiceGrpc.InventoryServiceBlockingStub stub() {
    return InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(Patience.STEP_SECONDS, TimeUnit.SECONDS);
  }

  private static GetSerialItemRequest serial(String serialNumber) {
    return GetSerialItemRequest.newBuilder().setSerialNumber(serialNumber).build();
  }

  private ServingStatus health(String service) {
    return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(Patience.STEP_SECONDS, TimeUnit.SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
  }

  @Test
  void stop_turnsNotServing_butServesNewCalls_throughoutTheDrainDelay() throws Exception {
    assertThat(health(SERVICE)).isEqualTo(ServingStatus.SERVING);

    CompletableFuture<Void> stopping = CompletableFuture.runAsync(server::stop, threads);
    Awaitility.await().atMost(Patience.STEP).pollInterval(Duration.ofMillis(10))
        .until(() -> health(SERVICE), ServingStatus.NOT_SERVING::equals);

    // NOT_SERVING, and yet a new call is answered: balancers that have not heard yet lose nothing.
    assertThat(health(SERVICE)).isEqualTo(ServingStatus.NOT_SERVING);
    assertThat(health("")).isEqualTo(ServingStatus.NOT_SERVING);
    assertThat(stub().getSerialItem(serial("SN-during-drain")).getSerialNumber()).isEqualTo("SN-during-drain");
    assertThat(sleeper.asked).as("the drain delay").isEqualTo(DRAIN);
    assertThat(stopping).isNotDone();

    sleeper.endDrain.countDown();
    stopping.get(Patience.STEP_SECONDS, TimeUnit.SECONDS);
  }

  @Test
  void stop_afterTheDrain_refusesNewCalls_andLetsInFlightCallsFinish() throws Exception {
    // Its deadline far past the test's steps: only the release may end it, not a slow machine's 5 s.
    CompletableFuture<SerialItem> inFlight = CompletableFuture.supplyAsync(() -> InventoryServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(60, TimeUnit.SECONDS).getSerialItem(serial("HOLD-1")), threads);
    assertThat(inventory.held.await(Patience.STEP_SECONDS, TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Void> stopping = CompletableFuture.runAsync(server::stop, threads);
    assertThat(sleeper.draining.await(Patience.STEP_SECONDS, TimeUnit.SECONDS)).isTrue();
    sleeper.endDrain.countDown();

    // Once the drain is over, the server refuses new calls (stop() refuses them right after the sleep).
    StatusRuntimeException refused = Awaitility.await("a call after the drain refused").atMost(Patience.STEP)
        .pollInterval(Duration.ofMillis(10)).until(() -> catchThrowableOfType(StatusRuntimeException.class,
            () -> stub().getSerialItem(serial("SN-after-drain"))), Objects::nonNull);
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(stopping).as("stop() waits for the call in flight").isNotDone();

    inventory.release.complete(null);
    assertThat(inFlight.get(Patience.STEP_SECONDS, TimeUnit.SECONDS).getSerialNumber()).isEqualTo("HOLD-1");
    stopping.get(Patience.STEP_SECONDS, TimeUnit.SECONDS);
  }
}
