package dev.warehouse.order;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.testing.SilentEndpoint;
import dev.warehouse.runtime.testing.TestServices;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A caller that goes away takes the service's work with it: the service stops waiting for the
 * DynamoDB request in flight and starts no other, where without the caller's end its retries would
 * go on (each attempt here times out after a quarter of 2 s).
 */
@Tag("integration")
class CallerCancellationTest {

  private static SilentEndpoint dynamo;
  private static ServerProcess process;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws Exception {
    dynamo = new SilentEndpoint();
    StoreServiceConfig test = TestServices.config(OrderMain.SERVICE_NAME, TestServices.uniqueTableName(), dynamo.endpoint(),
        Duration.ofSeconds(2));
    // No table to create: this DynamoDB never answers.
    StoreServiceConfig config = new StoreServiceConfig(test.serviceName(), 0, -1, test.dynamoEndpoint(), test.region(),
        test.tableName(), false, test.pageTokenKey(), test.dynamoCallTimeout(), test.dynamoIoThreads(),
        test.shutdownDrain(), test.shutdownGrace(), test.hotKeyLogShare());
    // No inventory either: the order never gets as far as its stock.
    process = DynamoPlugin.start(config,
        OrderMain.services(OrderSettings.plaintext("127.0.0.1:1").withRecovery(Duration.ofSeconds(30), Duration.ZERO)),
        List.of());
    channel = NettyChannelBuilder.forAddress("127.0.0.1", process.grpcPort()).usePlaintext().build();
  }

  @AfterAll
  static void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    process.close();
    dynamo.close();
  }

  @Test
  void aCancelledCall_startsNoFurtherDynamoDbRequest() {
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    Context.CancellableContext call = Context.current().withCancellation();
    call.run(() -> OrderServiceGrpc.newStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS)
        .getOrder(GetOrderRequest.newBuilder().setOrderId("O-1").build(), new StreamObserver<>() {
          @Override
          public void onNext(Order value) {}

          @Override
          public void onError(Throwable t) {
            ended.complete(t);
          }

          @Override
          public void onCompleted() {
            ended.complete(null);
          }
        }));
    Awaitility.await("the call's first request").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
        .until(dynamo::requests, n -> n == 1);

    call.cancel(null);
    assertThat(ended.join()).isNotNull();
    // Still one request throughout the time the remaining attempts would have taken (4 × 500 ms), and past
    // the 2 s an attempt of the old code took before its retry: an absence is watched for a while, not polled for.
    Awaitility.await("no request after the cancellation").during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(50)).until(dynamo::requests, n -> n == 1);
  }
}
