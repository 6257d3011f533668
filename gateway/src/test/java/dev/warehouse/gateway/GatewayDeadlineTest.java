package dev.warehouse.gateway;

import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.runtime.process.GrpcServer;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Deadlines through the gateway: the caller's carries over to the backend; a call without one gets the default. */
@Tag("integration")
class GatewayDeadlineTest {

  /** A backend that answers after two seconds and reports the deadline and cancellation it saw. */
  private static final class SlowInventory extends InventoryServiceGrpc.InventoryServiceImplBase {
    final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    volatile CompletableFuture<Long> seenDeadlineMs = new CompletableFuture<>();
    volatile CompletableFuture<Boolean> cancelled = new CompletableFuture<>();

    @Override
    public void getSerialItem(GetSerialItemRequest request, StreamObserver<SerialItem> observer) {
      Context context = Context.current();
      seenDeadlineMs.complete(context.getDeadline() == null ? -1 : context.getDeadline().timeRemaining(TimeUnit.MILLISECONDS));
      context.addListener(c -> cancelled.complete(true), Runnable::run);
      timer.schedule(() -> {
        if (!context.isCancelled()) {
          observer.onNext(SerialItem.newBuilder().setSerialNumber(request.getSerialNumber()).build());
          observer.onCompleted();
        }
      }, 2, TimeUnit.SECONDS);
    }
  }

  private static final SlowInventory backend = new SlowInventory();
  private static GrpcServer backendServer;
  private static GatewayProcess gateway;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws Exception {
    backendServer = new GrpcServer(NettyServerBuilder.forPort(0), List.of(backend), List.of(), Duration.ZERO,
        Duration.ofSeconds(1)).start();
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + backendServer.port()),
        List.of("127.0.0.1:" + backendServer.port()), Duration.ofMillis(400), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
        Duration.ofSeconds(1), Duration.ZERO, Duration.ofSeconds(1)));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
    // The path warmed before the deadlines are timed: the first call also connects the gateway to the backend,
    // which on a loaded machine can take most of a short deadline (docs/performance-log.md, the test suite).
    // (It is answered after the backend's two seconds.)
    InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
        .getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN-0").build());
  }

  @AfterAll
  static void stop() throws Exception {
    channel.shutdownNow();
    gateway.close();
    backendServer.stop();
    backend.timer.shutdownNow();
  }

  private static StatusRuntimeException call(InventoryServiceGrpc.InventoryServiceBlockingStub stub) {
    backend.seenDeadlineMs = new CompletableFuture<>();
    backend.cancelled = new CompletableFuture<>();
    return failure(() -> stub.getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN-1").build()));
  }

  @Test
  void callersDeadline_reachesTheBackend_andExpiringCancelsIt() throws Exception {
    // Short of the backend's two seconds, and far over the gateway's default (400 ms): what the backend sees
    // is the caller's, however long the hop took on a loaded machine, not the default.
    StatusRuntimeException e = call(InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(1900, TimeUnit.MILLISECONDS));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(backend.seenDeadlineMs.get(5, TimeUnit.SECONDS)).isGreaterThan(400L).isLessThanOrEqualTo(1900L);
    assertThat(backend.cancelled.get(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void callWithoutDeadline_getsTheDefault() throws Exception {
    // Without the default the backend would answer after two seconds; DEADLINE_EXCEEDED, and a deadline of at
    // most the default at the backend, say the default applied (no wall-clock window, which load would break).
    StatusRuntimeException e = call(InventoryServiceGrpc.newBlockingStub(channel));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(backend.seenDeadlineMs.get(5, TimeUnit.SECONDS)).isGreaterThan(0L).isLessThanOrEqualTo(400L);
  }
}
