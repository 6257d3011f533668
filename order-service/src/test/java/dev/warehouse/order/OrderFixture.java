package dev.warehouse.order;

import dev.warehouse.order.audit.OrderAudit;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.audit.AuditReport;
import dev.warehouse.runtime.audit.PacedScan;
import dev.warehouse.runtime.server.ServiceProcess;
import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.runtime.testing.MetricsScrape;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.RecordingInterceptor;
import dev.warehouse.runtime.testing.TestServices;
import com.google.type.Money;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The order-service as it runs in production (same wiring, real Netty server and channel), on its
 * own table in the shared moto server, behind a fault proxy, with every DynamoDB request recorded.
 */
final class OrderFixture implements AutoCloseable {

  /** DynamoDB call timeout of the fault tests: short, so persistent faults end quickly. */
  static final Duration FAULT_TEST_CALL_TIMEOUT = Duration.ofSeconds(2);
  /** DynamoDB call timeout otherwise: 50 concurrent transactions queue for seconds in the serialized moto. */
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

  final String table = TestServices.uniqueTableName();
  final RecordingInterceptor recorder = new RecordingInterceptor();
  final DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint());
  final ServiceProcess process;
  final ManagedChannel channel;
  final DynamoDbAsyncClient dynamo;

  OrderFixture() throws Exception {
    this(CALL_TIMEOUT);
  }

  OrderFixture(Duration dynamoCallTimeout) throws Exception {
    process = ServiceProcess.start(
        TestServices.config(OrderMain.SERVICE_NAME, table, proxy.endpoint(), dynamoCallTimeout),
        OrderMain::services, List.of(recorder));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", process.grpcPort()).usePlaintext().build();
    dynamo = TestServices.dynamo(table);
  }

  OrderServiceGrpc.OrderServiceBlockingStub stub() {
    return OrderServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  static String id(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  static Money eur(long units, int nanos) {
    return Money.newBuilder().setCurrencyCode("EUR").setUnits(units).setNanos(nanos).build();
  }

  static PlaceOrderRequest.Builder order(String customerId, String orderId, String date) {
    return PlaceOrderRequest.newBuilder().setCustomerId(customerId).setOrderId(orderId).setOrderDate(date)
        .setTotal(eur(42, 500_000_000)).setRequestId(id("req"));
  }

  /** Runs the consistency audit over this fixture's table. */
  AuditReport audit() {
    return new OrderAudit(new PacedScan(dynamo, table, "order-audit", new PacedScan.Options(2, 1000))).audit();
  }

  String scrapeMetrics() {
    return MetricsScrape.scrape(process.metricsPort());
  }

  @Override
  public void close() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    process.close();
    proxy.close();
    dynamo.close();
  }
}
