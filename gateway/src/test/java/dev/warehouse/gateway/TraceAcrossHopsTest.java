package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.type.Money;
import dev.warehouse.gateway.auth.AuditTrail;
import dev.warehouse.inventory.InventoryMain;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.order.OrderMain;
import dev.warehouse.order.OrderSettings;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.service.DynamoPlugin;
import dev.warehouse.runtime.testing.TestServices;
import dev.warehouse.runtime.trace.TraceSettings;
import dev.warehouse.testing.LogRecords;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * One order placed through the gateway is one trace: spans in the gateway, the order-service and the
 * inventory-service, and one for each DynamoDB request they made, every span a child of the one that caused it.
 * The three processes run as in production (in this JVM, on real channels, against moto), each exporting to one
 * in-memory exporter.
 */
@Tag("integration")
class TraceAcrossHopsTest {

  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
  /** An outside caller's trace: the gateway must not continue it. */
  private static final String CALLERS_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

  private static final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private static ServerProcess inventory;
  private static ServerProcess orders;
  private static GatewayProcess gateway;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws Exception {
    String table = TestServices.uniqueTableName();
    inventory = DynamoPlugin.start(TestServices.config(InventoryMain.SERVICE_NAME, table)
        .withTracing(TraceSettings.exportingTo(spans, true)), InventoryMain::services, List.of());
    orders = DynamoPlugin.start(TestServices.config(OrderMain.SERVICE_NAME, table)
            .withTracing(TraceSettings.exportingTo(spans, true)),
        OrderMain.services(OrderSettings.plaintext("127.0.0.1:" + inventory.grpcPort())), List.of());
    gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + inventory.grpcPort()),
        List.of("127.0.0.1:" + orders.grpcPort()), Duration.ofSeconds(10), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
        GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(1))
        .withTracing(TraceSettings.exportingTo(spans, false)));
    channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
    InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).putProductInventory(
        PutProductInventoryRequest.newBuilder().setInventory(ProductInventory.newBuilder().setProductId("P-TRACE")
            .setWarehouseId("W1").setQuantity(10)).build());
  }

  @AfterAll
  static void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    for (AutoCloseable process : new AutoCloseable[] {gateway, orders, inventory}) {
      if (process != null) {
        process.close();
      }
    }
  }

  @Test
  void aPlacedOrder_isOneTrace_fromTheGatewayThroughBothServicesToEachDynamoDbRequest() throws Exception {
    spans.reset();
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER),
        "00-" + CALLERS_TRACE + "-00f067aa0ba902b7-01");
    try (LogRecords audit = new LogRecords(AuditTrail.class)) {
      OrderServiceGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
          .withDeadlineAfter(30, TimeUnit.SECONDS).placeOrder(PlaceOrderRequest.newBuilder().setCustomerId("C-TRACE")
              .setRequestId("r-" + UUID.randomUUID()).addLines(OrderLine.newBuilder().setProductId("P-TRACE")
                  .setWarehouseId("W1").setQuantity(1).setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(5)))
              .build());

      SpanData root = spans.getFinishedSpanItems().stream()
          .filter(span -> span.getKind() == SpanKind.SERVER && service(span).equals("gateway")).findFirst().orElseThrow();
      assertThat(root.getName()).isEqualTo("warehouse.order.v1.OrderService/PlaceOrder");
      // The caller's traceparent started nothing of ours (the gateway trusts no caller's by default).
      assertThat(root.getTraceId()).isNotEqualTo(CALLERS_TRACE);
      assertThat(root.getParentSpanContext().isValid()).isFalse();
      // The gateway's audit line names the same trace: the id to look it up by. The audit is written on its own
      // thread, so the set-up's PutProductInventory line may arrive after the recording began: find PlaceOrder's.
      Awaitility.await("the PlaceOrder audit line").atMost(Duration.ofSeconds(5)).untilAsserted(() ->
          assertThat(audit.events()).filteredOn(line -> root.getName().equals(line.field("method")))
              .singleElement().satisfies(line -> assertThat(line.field("trace_id")).isEqualTo(root.getTraceId())));

      List<SpanData> trace = spans.getFinishedSpanItems().stream()
          .filter(span -> span.getTraceId().equals(root.getTraceId())).toList();
      assertThat(trace.stream().map(span -> service(span) + " " + span.getKind()).collect(Collectors.toSet()))
          .contains("gateway SERVER", "gateway CLIENT", "order-service SERVER", "order-service CLIENT",
              "inventory-service SERVER");
      // Every DynamoDB request of both services, with the route it served and the capacity it consumed.
      List<SpanData> dynamo = trace.stream().filter(span -> span.getName().startsWith("DynamoDB.")).toList();
      assertThat(dynamo.stream().map(TraceAcrossHopsTest::service).collect(Collectors.toSet()))
          .containsExactlyInAnyOrder("order-service", "inventory-service");
      assertThat(dynamo).allSatisfy(span -> {
        assertThat(span.getKind()).isEqualTo(SpanKind.CLIENT);
        assertThat(span.getAttributes().get(AttributeKey.stringKey("warehouse.route"))).as(span.getName())
            .matches("[AW]\\d+");
        assertThat(span.getAttributes().get(AttributeKey.doubleKey("aws.dynamodb.consumed_capacity_units")))
            .as(span.getName()).isNotNull();
      });
      assertThat(dynamo).extracting(SpanData::getName).contains("DynamoDB.TransactWriteItems");

      // One tree: every span but the root has its parent in the trace, in its own process or the caller's.
      Map<String, SpanData> byId = trace.stream().collect(Collectors.toMap(SpanData::getSpanId, span -> span));
      assertThat(trace).filteredOn(span -> span != root).allSatisfy(span ->
          assertThat(byId).as("the parent of " + service(span) + " " + span.getName())
              .containsKey(span.getParentSpanId()));
      // A service's SERVER span is the child of its caller's CLIENT span.
      Set<String> serverParents = trace.stream().filter(span -> span.getKind() == SpanKind.SERVER && span != root)
          .map(span -> byId.get(span.getParentSpanId()).getKind().name()).collect(Collectors.toSet());
      assertThat(serverParents).containsExactly("CLIENT");
    }
  }

  private static String service(SpanData span) {
    return span.getResource().getAttribute(SERVICE_NAME);
  }
}
