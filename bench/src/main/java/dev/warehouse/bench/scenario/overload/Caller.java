package dev.warehouse.bench.scenario.overload;

import static dev.warehouse.bench.scenario.overload.Overload.POLITE_DEADLINE;
import static dev.warehouse.bench.scenario.overload.Overload.PROBE_DEADLINE;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.ListCustomerOrdersRequest;
import dev.warehouse.order.v1.OrderServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The polite caller and the recovery probes: a client of its own (its own connection and event loop),
 * as another caller of the gateway would be, not queued behind the flood's answers.
 */
final class Caller implements AutoCloseable {
  private final ManagedChannel channel;
  private final OrderServiceGrpc.OrderServiceStub orders;
  private final DataSet data;

  Caller(String address, DataSet data) {
    this.channel = NettyChannelBuilder.forTarget(address).usePlaintext().build();
    this.orders = OrderServiceGrpc.newStub(channel);
    this.data = data;
  }

  CompletableFuture<?> listCustomerOrders(long i) {
    return GrpcTarget.<dev.warehouse.order.v1.ListCustomerOrdersResponse>unary(o -> orders.withDeadlineAfter(POLITE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
        .listCustomerOrders(ListCustomerOrdersRequest.newBuilder()
            .setCustomerId(DataSet.customer((int) (i % data.customers))).build(), o));
  }

  CompletableFuture<?> getOrder(long i) {
    return GrpcTarget.<dev.warehouse.order.v1.Order>unary(o -> orders.withDeadlineAfter(PROBE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
        .getOrder(GetOrderRequest.newBuilder().setOrderId(DataSet.order((int) (i % data.customers), 0)).build(), o));
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }
}
