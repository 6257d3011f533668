package dev.warehouse.bench.scenario;

import static dev.warehouse.bench.report.Report.ms;
import static dev.warehouse.bench.report.Report.num;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.bench.load.Call;
import dev.warehouse.bench.load.ClosedLoop;
import dev.warehouse.bench.load.KeyChooser;
import dev.warehouse.bench.load.OpenLoop;
import dev.warehouse.bench.report.Report;
import dev.warehouse.bench.stack.Jars;
import dev.warehouse.bench.stack.Scrape;
import dev.warehouse.bench.stack.Stack;
import dev.warehouse.bench.standin.StandInDynamo;
import dev.warehouse.bench.stats.Summary;
import dev.warehouse.bench.target.GrpcTarget;
import dev.warehouse.bench.target.Target.Op;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.ReservationLine;
import dev.warehouse.inventory.v1.ReservationServiceGrpc;
import dev.warehouse.inventory.v1.ReserveStockRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 9: what buying stock costs.
 *
 * <ul>
 *   <li>PlaceOrder on the stand-in DynamoDB, through the gateway and straight to the order-service, side by
 *       side (open loop, interleaved): p50/p99, and what each hop adds: the gateway's (client to order-service)
 *       and the order-service's own calls to the inventory (two per order: hold, confirm). A hop's cost is
 *       measured as the callers see it minus what the callee spent serving it, from the processes' own gRPC
 *       timers (client and server {@code processing_duration}), so both hops are measured the same way.
 *   <li>Holds per second (ReserveStock straight to the inventory, 1 unit each, a new order each), closed loop,
 *       on one hot stock record and spread over many, on moto and on the stand-in, with the transaction
 *       conflicts the inventory retried per second.
 * </ul>
 */
public final class BuyingStock {

  /** Callers of the closed-loop holds: enough to queue on one record. */
  static final int HOLDERS = 16;
  /** Stock records the spread holds go to. */
  static final int SPREAD = 200;
  /**
   * PlaceOrder calls per second, both paths together (the interleaved schedule's rate is its total): a
   * moderate load, to measure latency rather than a queue.
   */
  static final double PLACE_RATE = 40;

  private BuyingStock() {}

  /**
   * Runs the scenario; with a {@code baseline} (an older build's jars), PlaceOrder is also measured against
   * that build's, side by side ({@link PlaceOrderAgainstBaseline}).
   */
  public static void run(Path root, Settings settings, Report report, Optional<Jars> baseline) throws Exception {
    report.heading("9. Buying stock");
    Map<String, Object> data = new LinkedHashMap<>();
    List<List<String>> holds = new ArrayList<>();

    String standInTable = "bench-" + UUID.randomUUID();
    try (StandInDynamo standIn = StandInDynamo.start(standInTable);
        Stack stack = Stack.on(root, standInTable, standIn.endpoint())) {
      placeOrder(stack, settings, report, data);
      if (baseline.isPresent()) {
        PlaceOrderAgainstBaseline.run(root, stack, baseline.get(), settings, report, data);
      }
      holds.addAll(holds(stack, "stand-in", settings, data));
    }
    try (Stack stack = Stack.start(root, "bench-" + UUID.randomUUID())) {
      stock(stack);
      holds.addAll(holds(stack, "moto", settings, data));
    }
    report.paragraph("Holds per second: ReserveStock straight to the inventory-service, one unit of one line, each "
            + "call a new order, " + HOLDERS + " callers in a closed loop for " + settings.measure().multipliedBy(3).toSeconds()
            + " s after a warm-up; \"hot\" holds all go to one stock record, \"spread\" over " + SPREAD + ". Conflicts "
            + "are the transaction attempts the inventory retried because another transaction held an item "
            + "(`dynamodb_transaction_conflicts_total`); moto serializes every request, so it has none of its own, and "
            + "the stand-in never conflicts: on both, what limits a hot record is the inventory's rounds, each read "
            + "and written again when a condition no longer holds.")
        .table(List.of("Store", "Stock records", "Holds/s", "p50 (ms)", "p99 (ms)", "Errors", "Conflicts/s"), holds)
        .data("buying_stock", data);
  }

  /** PlaceOrder through the gateway and straight, interleaved, with each hop's cost from the processes' timers. */
  private static void placeOrder(Stack stack, Settings settings, Report report, Map<String, Object> data)
      throws Exception {
    DataSet dataSet = new DataSet(settings.dataItems());
    String gateway = "127.0.0.1:" + stack.gateway.grpcPort;
    GrpcTarget viaGateway = new GrpcTarget("gateway", gateway, gateway, dataSet);
    GrpcTarget direct = new GrpcTarget("direct", "127.0.0.1:" + stack.inventory.grpcPort,
        "127.0.0.1:" + stack.orders.grpcPort, dataSet);
    KeyChooser keys = KeyChooser.uniform(Integer.MAX_VALUE, dataSet.products);
    List<Call> calls = List.of(viaGateway.call(Op.PLACE_ORDER, i -> keys.next()), direct.call(Op.PLACE_ORDER, i -> keys.next()));
    // Warm every JVM on the path first, then measure from a clean slate of counters: a closed loop, then
    // rounds at the measured rate until two in a row agree within 10 % on their p50s. PlaceOrder's path (two
    // services, six DynamoDB calls) keeps the JIT compilers busy for minutes on 2 cores, so the closed loop
    // alone leaves it far slower than a warm stack (docs/performance-log.md).
    ClosedLoop.run("warm-up", calls.get(0), 4, Duration.ZERO, settings.standInMeasure().multipliedBy(4));
    List<String> labels = List.of("PlaceOrder via gateway", "PlaceOrder straight");
    List<Double> warmUp = new ArrayList<>();
    while (warmUp.size() < SideBySide.MAX_WARM_UP_ROUNDS) {
      double sum = OpenLoop.interleaved(labels, calls, PLACE_RATE, Duration.ZERO, settings.standInMeasure().multipliedBy(2))
          .stream().mapToDouble(Summary::p50).sum();
      warmUp.add(sum);
      double before = warmUp.size() < 2 ? Double.NaN : warmUp.get(warmUp.size() - 2);
      if (Math.abs(sum - before) <= 0.1 * Math.min(sum, before)) {
        break;
      }
    }
    Hops before = Hops.scrape(stack);
    List<Summary> measured = OpenLoop.interleaved(labels, calls,
        PLACE_RATE, settings.warmup(), settings.standInMeasure().multipliedBy(4));
    Hops after = Hops.scrape(stack);
    viaGateway.close();
    direct.close();
    double gatewayHop = after.gatewayHopMs(before);
    double serviceHop = after.serviceHopMs(before);
    List<List<String>> rows = new ArrayList<>();
    for (Summary s : measured) {
      rows.add(List.of(s.name(), ms(s.p50()), ms(s.p99()), Long.toString(s.count()), Long.toString(s.errorCount())));
    }
    report.paragraph("PlaceOrder on the stand-in DynamoDB (two transactions of the order, a hold and a confirm at the "
            + "inventory, each answered in microseconds), through the gateway and straight to the order-service, "
            + "interleaved at " + num(PLACE_RATE) + " calls/s after a warm-up: a closed loop of 4 callers, then rounds "
            + "at that rate until two in a row agreed within 10 % on their p50s (" + warmUp.size() + " rounds, sums "
            + warmUp.stream().map(Report::ms).toList() + " ms).")
        .table(List.of("Call", "p50 (ms)", "p99 (ms)", "Calls", "Errors"), rows)
        .paragraph("What one hop adds, the same way for both: the mean time its callers waited for a call, minus the mean "
            + "time the callee spent serving it (the processes' own `grpc_client_processing_duration` and "
            + "`grpc_server_processing_duration` over the measured calls).")
        .table(List.of("Hop", "Added per call (ms)", "Target"), List.of(
            List.of("gateway → order-service (PlaceOrder)", ms(gatewayHop), ""),
            List.of("order-service → inventory-service (ReserveStock, ConfirmReservation)", ms(serviceHop),
                "≤ the gateway's: " + (serviceHop <= gatewayHop ? "met" : "not met"))));
    data.put("place_order", measured);
    data.put("gateway_hop_ms", gatewayHop);
    data.put("service_hop_ms", serviceHop);
  }

  /** A hot record and {@value #SPREAD} others, with as many units as no run can hold. */
  private static void stock(Stack stack) throws InterruptedException {
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", stack.inventory.grpcPort).usePlaintext().build();
    try {
      InventoryServiceGrpc.InventoryServiceBlockingStub inventory = InventoryServiceGrpc.newBlockingStub(channel);
      for (int p = -1; p < SPREAD; p++) {
        inventory.withDeadlineAfter(30, TimeUnit.SECONDS).putProductInventory(PutProductInventoryRequest.newBuilder()
            .setInventory(ProductInventory.newBuilder().setProductId(product(p)).setWarehouseId("W1")
                .setQuantity(1_000_000_000L)).build());
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static String product(int p) {
    return p < 0 ? "P-HOT" : DataSet.product(p);
  }

  private static List<List<String>> holds(Stack stack, String store, Settings settings, Map<String, Object> data)
      throws Exception {
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", stack.inventory.grpcPort).usePlaintext().build();
    List<List<String>> rows = new ArrayList<>();
    try {
      ReservationServiceGrpc.ReservationServiceStub reservations = ReservationServiceGrpc.newStub(channel);
      for (boolean hot : List.of(true, false)) {
        Call hold = i -> GrpcTarget.<dev.warehouse.inventory.v1.Reservation>unary(o -> reservations
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .reserveStock(ReserveStockRequest.newBuilder().setOrderId("B-" + UUID.randomUUID())
                .addLines(ReservationLine.newBuilder().setProductId(hot ? product(-1) : product((int) (i % SPREAD)))
                    .setWarehouseId(store.equals("moto") ? "W1" : DataSet.warehouseOf(0, 0)).setQuantity(1))
                .build(), o));
        double conflictsBefore = conflicts(stack);
        Summary s = ClosedLoop.run(store + (hot ? " hot" : " spread"), hold, HOLDERS, settings.warmup(),
            settings.measure().multipliedBy(3));
        double conflictsPerSecond = (conflicts(stack) - conflictsBefore) / (settings.measure().multipliedBy(3).toMillis()
            / 1000.0 + settings.warmup().toMillis() / 1000.0);
        rows.add(List.of(store, hot ? "1 (hot)" : SPREAD + " (spread)", num(s.throughput()), ms(s.p50()), ms(s.p99()),
            Long.toString(s.errorCount()), num(conflictsPerSecond)));
        data.put("holds_" + store + (hot ? "_hot" : "_spread"), s);
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    return rows;
  }

  private static double conflicts(Stack stack) {
    return Scrape.sum(Scrape.text(stack.inventory.metricsPort), "dynamodb_transaction_conflicts_total", "");
  }

  /** The gRPC timers of the two hops, summed (seconds) and counted, at one moment. */
  private record Hops(double gatewayClient, double gatewayClientCount, double orderServer, double orderServerCount,
      double orderClient, double orderClientCount, double inventoryServer, double inventoryServerCount) {

    static Hops scrape(Stack stack) {
      String gateway = Scrape.text(stack.gateway.metricsPort);
      String orders = Scrape.text(stack.orders.metricsPort);
      String inventory = Scrape.text(stack.inventory.metricsPort);
      String place = "method=\"PlaceOrder\"";
      String held = "service=\"warehouse.inventory.v1.ReservationService\"";
      return new Hops(
          Scrape.sum(gateway, "grpc_client_processing_duration_seconds_sum", place),
          Scrape.sum(gateway, "grpc_client_processing_duration_seconds_count", place),
          Scrape.sum(orders, "grpc_server_processing_duration_seconds_sum", place),
          Scrape.sum(orders, "grpc_server_processing_duration_seconds_count", place),
          Scrape.sum(orders, "grpc_client_processing_duration_seconds_sum", held),
          Scrape.sum(orders, "grpc_client_processing_duration_seconds_count", held),
          Scrape.sum(inventory, "grpc_server_processing_duration_seconds_sum", held),
          Scrape.sum(inventory, "grpc_server_processing_duration_seconds_count", held));
    }

    double gatewayHopMs(Hops before) {
      return 1000 * (mean(gatewayClient - before.gatewayClient, gatewayClientCount - before.gatewayClientCount)
          - mean(orderServer - before.orderServer, orderServerCount - before.orderServerCount));
    }

    double serviceHopMs(Hops before) {
      return 1000 * (mean(orderClient - before.orderClient, orderClientCount - before.orderClientCount)
          - mean(inventoryServer - before.inventoryServer, inventoryServerCount - before.inventoryServerCount));
    }

    private static double mean(double sum, double count) {
      return count == 0 ? 0 : sum / count;
    }
  }
}
