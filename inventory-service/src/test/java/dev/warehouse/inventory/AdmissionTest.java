package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static dev.warehouse.testing.Statuses.detail;
import static dev.warehouse.testing.Statuses.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.testing.MetricsScrape;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The concurrency limit on a tiny fixed limit of 2, with the store's answers held by the fault proxy so
 * that calls stay in flight exactly as long as the test needs: the excess of one route waits for a slot
 * and is served when one is given back, or, when none comes within half its caller's time, is refused
 * without waiting on the store, with RESOURCE_EXHAUSTED, reason OVERLOADED and a RetryInfo; another
 * route still gets its share; health checks and invalid requests are answered throughout; and a slot
 * comes back when its call ends, answered or cancelled. A connection's calls past its stream limit wait at
 * the client.
 */
@Tag("integration")
class AdmissionTest {

  private static InventoryFixture inventory;
  /** Calls one connection may have open at once (GRPC_MAX_CONCURRENT_STREAMS): above what the other tests hold. */
  private static final int STREAMS = 3;

  /** Long against the impatient callers' half of their 2 s: they are refused when their own time says so. */
  private static final Duration MAX_WAIT = Duration.ofSeconds(10);

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture(AdmissionConfig.fixed(2).withMaxWait(MAX_WAIT).withMaxStreams(STREAMS));
  }

  /** A caller with 2 s: over the limit, it waits 1 s for a slot, then is refused. */
  private static InventoryServiceGrpc.InventoryServiceBlockingStub impatient() {
    return InventoryServiceGrpc.newBlockingStub(inventory.channel).withDeadlineAfter(2, TimeUnit.SECONDS);
  }

  @AfterEach
  void clearHolds() {
    inventory.proxy.clear();
  }

  @AfterAll
  static void stop() throws Exception {
    inventory.close();
  }

  private static GetProductInventoryRequest read(String product) {
    // Strongly consistent: the strict launcher's eventually consistent reads may miss the stock just put.
    return GetProductInventoryRequest.newBuilder().setProductId(product).setWarehouseId("W1").setConsistentRead(true).build();
  }

  /** Two reads of one route, each holding a slot while its GetItem waits at the proxy. */
  private static List<CompletableFuture<ProductInventory>> fill(String product, CountDownLatch[] gate) {
    gate[0] = inventory.proxy.hold("GetItem", 2);
    // Counted before the reads start: counted after, a read already at the proxy would be missed, and the wait
    // below would last until a held read gave up (its attempt timed out and its retry, not held, answered).
    long before = inventory.proxy.calls("GetItem");
    List<CompletableFuture<ProductInventory>> held = IntStream.range(0, 2)
        .mapToObj(i -> CompletableFuture.supplyAsync(() -> inventory.stub().getProductInventory(read(product))))
        .toList();
    // Both reads have reached the store (the proxy), so both hold their slots; bounded, so a lost read fails
    // the test instead of hanging the build.
    Awaitility.await("both reads held at the store").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
        .until(() -> inventory.proxy.calls("GetItem") >= before + 2 || held.stream().anyMatch(CompletableFuture::isDone));
    return held;
  }

  @Test
  void overTheLimit_aCallWaitsForASlot_andIsServedWhenOneIsGivenBack() throws Exception {
    String product = id("P");
    inventory.stock(product, "W1", 4);
    CountDownLatch[] gate = new CountDownLatch[1];
    List<CompletableFuture<ProductInventory>> held = fill(product, gate);
    CompletableFuture<ProductInventory> third = CompletableFuture.supplyAsync(
        () -> inventory.stub().getProductInventory(read(product)));
    Awaitility.await("the third read waiting for a slot").atMost(Duration.ofSeconds(30))
        .until(() -> MetricsScrape.scrape(inventory.process.metricsPort()),
            metrics -> metrics.matches("(?s).*admission_waiting\\{[^}]*route=\"GetProductInventory\"[^}]*\\} 1\\.0.*"));
    assertThat(third).isNotDone();

    gate[0].countDown();
    assertThat(third.get(20, TimeUnit.SECONDS).getQuantity()).as("served, not refused").isEqualTo(4);
    assertThat(held).allSatisfy(call -> assertThat(call.get(20, TimeUnit.SECONDS).getQuantity()).isEqualTo(4));
    assertThat(MetricsScrape.scrape(inventory.process.metricsPort()))
        .containsPattern("admission_wait_seconds_count\\{[^}]*admitted=\"true\"[^}]*route=\"GetProductInventory\"[^}]*\\} [1-9]");
  }

  @Test
  void overTheLimit_aCallThatWaitsHalfItsTimeIsRefused_whileAnotherRouteHealthAndInvalidInputAreServed()
      throws Exception {
    String product = id("P");
    inventory.stock(product, "W1", 7);
    CountDownLatch[] gate = new CountDownLatch[1];
    List<CompletableFuture<ProductInventory>> held = fill(product, gate);

    StatusRuntimeException refused = failure(() -> impatient().getProductInventory(read(product)));
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    ErrorInfo info = detail(refused, ErrorInfo.class);
    assertThat(info.getReason()).isEqualTo("OVERLOADED");
    assertThat(info.getMetadataMap()).containsEntry("route", "GetProductInventory").containsEntry("retry_after_ms", "100");
    assertThat(detail(refused, RetryInfo.class).getRetryDelay().getNanos()).isEqualTo(100_000_000);
    // Refused while both held reads still wait on the store: it waited half its time for a slot, and none came.
    assertThat(held).noneMatch(CompletableFuture::isDone);

    // Another route has its own share of the full limit (its GetItem is not held).
    assertThatThrownBy(() -> inventory.stub().getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber(id("S")).build()))
        .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.NOT_FOUND));
    // Calls that need no store are never refused.
    assertThatThrownBy(() -> inventory.stub().getProductInventory(read("")))
        .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
    assertThat(HealthGrpc.newBlockingStub(inventory.channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);

    gate[0].countDown();
    assertThat(held).allSatisfy(call -> assertThat(call.get(20, TimeUnit.SECONDS).getQuantity()).isEqualTo(7));
    // The held calls gave their slots back.
    assertThat(inventory.stub().getProductInventory(read(product)).getQuantity()).isEqualTo(7);
    assertThat(MetricsScrape.scrape(inventory.process.metricsPort()))
        .containsPattern("admission_calls_total\\{[^}]*outcome=\"rejected\"[^}]*\\} [1-9]")
        .containsPattern("admission_limit\\{[^}]*limiter=\"inventory-service\"[^}]*\\} 2.0");
  }

  @Test
  void aCallerThatCancels_givesItsSlotBack() throws Exception {
    String product = id("P");
    inventory.stock(product, "W1", 3);
    CountDownLatch gate = inventory.proxy.hold("GetItem", 2);
    Context.CancellableContext first = Context.current().withCancellation();
    CompletableFuture<ProductInventory> cancelled = new CompletableFuture<>();
    long before = inventory.proxy.calls("GetItem");
    first.run(() -> InventoryServiceGrpc.newStub(inventory.channel).withDeadlineAfter(20, TimeUnit.SECONDS)
        .getProductInventory(read(product), new io.grpc.stub.StreamObserver<>() {
          @Override
          public void onNext(ProductInventory value) {
            cancelled.complete(value);
          }

          @Override
          public void onError(Throwable t) {
            cancelled.completeExceptionally(t);
          }

          @Override
          public void onCompleted() { }
        }));
    CompletableFuture<ProductInventory> second = CompletableFuture.supplyAsync(
        () -> inventory.stub().getProductInventory(read(product)));
    Awaitility.await("both reads held at the store").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
        .until(() -> inventory.proxy.calls("GetItem") >= before + 2);
    assertThatThrownBy(() -> impatient().getProductInventory(read(product)))
        .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));

    first.cancel(null);
    assertThatThrownBy(() -> cancelled.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusRuntimeException.class);
    // The cancelled call's slot is free although its GetItem is still held at the proxy.
    // Asked until answered: the server learns of the cancellation a moment after the client.
    ProductInventory answered = Awaitility.await("the cancelled call's slot back").atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20)).until(() -> {
          try {
            return impatient().getProductInventory(read(product));
          } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            return null;
          }
        }, Objects::nonNull);
    assertThat(answered.getQuantity()).isEqualTo(3);
    assertThat(second).isNotDone();
    gate.countDown();
    assertThat(second.get(20, TimeUnit.SECONDS).getQuantity()).isEqualTo(3);
  }

  @Test
  void aConnectionsCallsPastItsStreamLimit_waitAtTheClient_whileAnotherConnectionIsServed() throws Exception {
    String product = id("P");
    inventory.stock(product, "W1", 5);
    CountDownLatch gate = inventory.proxy.hold("GetItem", STREAMS);
    long before = inventory.proxy.calls("GetItem");
    // As many calls as the connection may have open, each waiting on the store: two of one route (its
    // limit) and one of another.
    ExecutorService callers = Executors.newCachedThreadPool(); // a thread per blocking call, whatever the cores
    List<CompletableFuture<Object>> open = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      open.add(CompletableFuture.supplyAsync(() -> inventory.stub().getProductInventory(read(product)), callers));
    }
    open.add(CompletableFuture.supplyAsync(() -> {
      try {
        return inventory.stub().getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber(id("S")).build());
      } catch (StatusRuntimeException e) {
        return e.getStatus().getCode();
      }
    }, callers));
    Awaitility.await("all three at the store").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
        .until(() -> inventory.proxy.calls("GetItem") >= before + STREAMS);

    // One call more on the same connection: the server allows it no stream, so it waits at the client.
    CompletableFuture<HealthCheckResponse.ServingStatus> queued = CompletableFuture.supplyAsync(() ->
        HealthGrpc.newBlockingStub(inventory.channel).withDeadlineAfter(20, TimeUnit.SECONDS)
            .check(HealthCheckRequest.getDefaultInstance()).getStatus(), callers);
    // A call on another connection, sent after it, is answered at once.
    ManagedChannel other = NettyChannelBuilder.forAddress("127.0.0.1", inventory.process.grpcPort()).usePlaintext().build();
    try {
      assertThat(HealthGrpc.newBlockingStub(other).withDeadlineAfter(5, TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    } finally {
      other.shutdownNow();
    }
    assertThat(queued).as("the call past the connection's stream limit").isNotDone();

    gate.countDown();
    assertThat(queued.get(20, TimeUnit.SECONDS)).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    assertThat(open.get(0).get(20, TimeUnit.SECONDS)).isInstanceOf(ProductInventory.class);
    assertThat(open.get(2).get(20, TimeUnit.SECONDS)).isEqualTo(Status.Code.NOT_FOUND);
    callers.shutdown();
  }
}
