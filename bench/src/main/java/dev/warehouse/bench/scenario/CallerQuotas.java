package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import dev.warehouse.bench.load.Call;
import dev.warehouse.bench.load.OpenLoop;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.Proc;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.PlaceOrderRequest;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 12: quotas per caller, and a cold burst. Through a gateway that authenticates callers by token
 * (the development policy, its quotas replaced by the scenario's), one caller floods A2 at
 * {@value #FLOOD_RATE} calls a second against its quota of {@value #FLOODER_RATE} while another asks the same
 * route {@value #POLITE_RATE} times a second within its own: the polite caller's success, the flooder's
 * refusals. First, on the freshly started stack, {@value #BURST} PlaceOrders at once: how many are refused
 * for load (target 0).
 */
public final class CallerQuotas {

  static final double FLOOD_RATE = 400;
  static final int FLOODER_RATE = 20;
  static final double POLITE_RATE = 10;
  static final int BURST = 40;
  /** The flooder's and the polite caller's roles in the development policy (both may read stock). */
  static final String FLOODER = "storefront";
  static final String POLITE = "buyer";

  private CallerQuotas() {}

  public static void run(Path root, Settings settings, Report report) throws Exception {
    report.heading("12. Quotas per caller, and a cold burst");
    Path work = root.resolve("target/bench-quotas");
    Path tokens = work.resolve("tokens");
    Path policy = work.resolve("policy.yaml");
    String dev = Files.readString(root.resolve("deploy/auth/policy.dev.yaml"));
    Files.createDirectories(work);
    Files.writeString(policy, dev.substring(0, dev.indexOf("\nquotas:")) + "\nquotas:\n"
        + "  default: {rate: 200, burst: 400, concurrency: 100}\n"
        + "  callers:\n    dev-" + FLOODER + ": {rate: " + FLOODER_RATE + ", burst: " + FLOODER_RATE + ", concurrency: 10}\n");
    SecurityCost.devKit(root, work, "dev-tokens", tokens.toString(), policy.toString());
    List<List<String>> rows = new ArrayList<>();
    Map<String, Object> data = new LinkedHashMap<>();
    try (Stack stack = Stack.start(root, "bench-" + UUID.randomUUID())) {
      Proc gateway = Stack.java(root, root.resolve("target/bench-logs"), "gateway", "gateway-quotas", Map.of(
          "AUTH_MODE", "jwt", "AUTH_POLICY_FILE", policy.toString(), "AUTH_JWKS_FILE", tokens.resolve("jwks.json").toString(),
          "AUTH_JWT_ISSUER", "warehouse-dev", "AUTH_JWT_AUDIENCE", "warehouse-gateway",
          "INVENTORY_ADDRESSES", "127.0.0.1:" + stack.inventory.grpcPort, "ORDER_ADDRESSES", "127.0.0.1:" + stack.orders.grpcPort));
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort).usePlaintext().build();
      try {
        gateway.awaitServing(120_000);
        String product = "QUOTA-" + UUID.randomUUID().toString().substring(0, 8);
        InventoryServiceGrpc.newBlockingStub(channel).withInterceptors(bearer(tokens, "admin"))
            .withDeadlineAfter(30, TimeUnit.SECONDS).putProductInventory(PutProductInventoryRequest.newBuilder()
                .setInventory(ProductInventory.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1000)).build());
        int refused = placeAtOnce(channel, bearer(tokens, "admin"), product);
        data.put("cold_burst_refused_for_load", refused);

        Call flood = read(channel, bearer(tokens, FLOODER), product);
        Call polite = read(channel, bearer(tokens, POLITE), product);
        CompletableFuture<Summary> flooding = CompletableFuture.supplyAsync(() -> {
          try {
            return OpenLoop.run("flooder", flood, FLOOD_RATE, settings.warmup(), settings.overloadMeasure(), null);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
        });
        Summary kept = OpenLoop.run("polite", polite, POLITE_RATE, settings.warmup(), settings.overloadMeasure(), null);
        Summary flooded = flooding.join();
        for (Summary s : List.of(kept, flooded)) {
          double sent = s.count() + s.errorCount();
          rows.add(List.of(s.name(), num(s.name().equals("polite") ? POLITE_RATE : FLOOD_RATE),
              num(s.name().equals("polite") ? 200 : FLOODER_RATE), num(s.throughput()),
              Long.toString(s.errors().getOrDefault("RESOURCE_EXHAUSTED", 0L)),
              Long.toString(s.errorCount() - s.errors().getOrDefault("RESOURCE_EXHAUSTED", 0L)),
              sent == 0 ? "-" : num(100.0 * s.count() / sent), ms(s.p50()), ms(s.p99())));
          data.put(s.name(), s);
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        gateway.close();
      }
    }
    Summary kept = (Summary) data.get("polite");
    double politeSuccess = kept.count() + kept.errorCount() == 0 ? 0 : 100.0 * kept.count() / (kept.count() + kept.errorCount());
    report.paragraph("A freshly started stack (moto through the launcher, a gateway authenticating by token) took "
            + BURST + " PlaceOrders at once, each its own order of one unit: **" + data.get("cold_burst_refused_for_load")
            + "** refused for load (target 0; a call past its method's limit waits for a slot).")
        .paragraph("Then one caller (`dev-" + FLOODER + "`, its quota " + FLOODER_RATE + " calls a second) flooded A2 at "
            + num(FLOOD_RATE) + " a second while another (`dev-" + POLITE + "`, the default quota of 200) asked the "
            + "same route " + num(POLITE_RATE) + " times a second, for " + settings.overloadMeasure().toSeconds() + " s:")
        .table(List.of("caller", "offered/s", "quota/s", "answered OK/s", "refused RESOURCE_EXHAUSTED", "other errors",
            "success %", "p50 ms", "p99 ms"), rows)
        .paragraph("The polite caller's success: **" + num(politeSuccess) + " %** (target at least 99 %).")
        .data("caller_quotas", data);
  }

  /** {@value #BURST} PlaceOrders of one unit each, sent at once and answered once: how many were refused OVERLOADED. */
  private static int placeAtOnce(ManagedChannel channel, ClientInterceptor token, String product) {
    OrderServiceGrpc.OrderServiceStub orders = OrderServiceGrpc.newStub(channel).withInterceptors(token);
    List<CompletableFuture<Order>> answers = new ArrayList<>();
    for (int i = 0; i < BURST; i++) {
      PlaceOrderRequest request = PlaceOrderRequest.newBuilder().setCustomerId("C-burst-" + i).setRequestId("r-" + UUID.randomUUID())
          .addLines(OrderLine.newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)
              .setUnitPrice(com.google.type.Money.newBuilder().setCurrencyCode("EUR").setUnits(10)))
          .build();
      answers.add(GrpcTarget.<Order>unary(o -> orders.withDeadlineAfter(30, TimeUnit.SECONDS).placeOrder(request, o)));
    }
    int overloaded = 0;
    for (CompletableFuture<Order> answer : answers) {
      try {
        answer.join();
      } catch (java.util.concurrent.CompletionException refused) {
        if ("OVERLOADED".equals(reason(refused.getCause()))) {
          overloaded++;
        }
      }
    }
    return overloaded;
  }

  private static String reason(Throwable failure) {
    com.google.rpc.Status status = io.grpc.protobuf.StatusProto.fromThrowable(failure);
    if (status != null) {
      for (com.google.protobuf.Any detail : status.getDetailsList()) {
        if (detail.is(com.google.rpc.ErrorInfo.class)) {
          try {
            return detail.unpack(com.google.rpc.ErrorInfo.class).getReason();
          } catch (com.google.protobuf.InvalidProtocolBufferException unreadable) {
            return "";
          }
        }
      }
    }
    return "";
  }

  private static Call read(ManagedChannel channel, ClientInterceptor token, String product) {
    InventoryServiceGrpc.InventoryServiceStub stub = InventoryServiceGrpc.newStub(channel).withInterceptors(token);
    GetProductInventoryRequest request = GetProductInventoryRequest.newBuilder().setProductId(product).setWarehouseId("W1").build();
    return i -> GrpcTarget.<ProductInventory>unary(o -> stub.withDeadlineAfter(5, TimeUnit.SECONDS).getProductInventory(request, o));
  }

  /** The role's development token ({@code dev-tokens} wrote it), as a header on every call. */
  static ClientInterceptor bearer(Path tokens, String role) throws java.io.IOException {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
        "Bearer " + Files.readString(tokens.resolve(role + ".jwt")).strip());
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }
}
