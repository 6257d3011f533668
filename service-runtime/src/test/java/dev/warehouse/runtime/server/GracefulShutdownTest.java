package dev.warehouse.runtime.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.SerialItem;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Stopping drains: calls in flight finish, new calls are refused, then the server is gone. */
class GracefulShutdownTest {

  /** Answers every call 500 ms after it arrives, without holding a thread. */
  private static final class SlowInventory extends InventoryServiceGrpc.InventoryServiceImplBase {
    final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    final CountDownLatch arrived = new CountDownLatch(1);

    @Override
    public void getSerialItem(GetSerialItemRequest request, StreamObserver<SerialItem> observer) {
      arrived.countDown();
      timer.schedule(() -> {
        observer.onNext(SerialItem.newBuilder().setSerialNumber(request.getSerialNumber()).build());
        observer.onCompleted();
      }, 500, TimeUnit.MILLISECONDS);
    }
  }

  @Test
  void stop_letsInFlightCallsFinish_andRefusesNewOnes() throws Exception {
    SlowInventory slow = new SlowInventory();
    ServiceServer server = new ServiceServer(NettyServerBuilder.forPort(0), List.of(slow), List.of(), Duration.ofSeconds(10))
        .start();
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    try {
      InventoryServiceGrpc.InventoryServiceBlockingStub stub =
          InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS);
      CompletableFuture<SerialItem> inFlight = CompletableFuture.supplyAsync(
          () -> stub.getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN-1").build()));
      assertThat(slow.arrived.await(5, TimeUnit.SECONDS)).isTrue();

      CompletableFuture<Void> stopping = CompletableFuture.runAsync(server::stop);
      Thread.sleep(100); // let shutdown begin while the call is still in flight
      assertThat(stopping).isNotDone();
      StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
          () -> stub.getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN-2").build()));
      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);

      assertThat(inFlight.get(5, TimeUnit.SECONDS).getSerialNumber()).isEqualTo("SN-1");
      stopping.get(5, TimeUnit.SECONDS);
    } finally {
      channel.shutdownNow();
      slow.timer.shutdownNow();
    }
  }
}
