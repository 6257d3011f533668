package dev.warehouse.devkit;

import com.google.type.Money;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.inventory.v1.GetSerialItemRequest;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.inventory.v1.PutSerialItemRequest;
import dev.warehouse.inventory.v1.SerialItem;
import dev.warehouse.order.v1.GetOrderRequest;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderLine;
import dev.warehouse.order.v1.PlaceOrderRequest;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.io.PrintStream;
import java.util.HashMap;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Loads the story's demo data through the gateway, as any client would (so each service writes only
 * its own keys): serial SN-98471; product P100 in warehouses W1 (40 units), W2 (25) and W3 (the last 2
 * units, below its reorder point of 10, so ListLowStock has an answer and the second buyer of them is
 * refused); customer C4821 with orders O900 (2026-07-26, 2 units from W1), O844 (2026-07-21, 1 from W1)
 * and O711 (2026-06-18, 5 from W2), whose units are held. Loading twice changes nothing: items are
 * written only when absent.
 */
public final class DemoData {

  public static final String DEFAULT_TARGET = "127.0.0.1:50051";
  private static final long WAIT_FOR_SERVICES_MS = 90_000;
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /** An order of {@code quantity} units of P100 from {@code warehouse}, at a unit price of units.nanos EUR. */
  private record DemoOrder(String orderId, String date, String warehouse, long quantity, long units, int nanos) {}

  private static final List<DemoOrder> ORDERS = List.of(
      new DemoOrder("O900", "2026-07-26", "W1", 2, 64, 950_000_000),
      new DemoOrder("O844", "2026-07-21", "W1", 1, 54, 0),
      new DemoOrder("O711", "2026-06-18", "W2", 5, 62, 50_000_000));

  private DemoData() {}

  /**
   * {@code load-demo-data [--cacert FILE [--cert FILE --key FILE]] [--token-file FILE] [host:port]}: plaintext,
   * or TLS trusting the CA bundle {@code --cacert} (and presenting a client certificate, when the gateway
   * wants one), as grpcurl's options of the same names; with a token file (as {@code dev-tokens} writes
   * them; an admin's), every call carries it as a bearer token. Returns the exit status: 0 loaded (or
   * already there), 1 failed, 2 bad arguments.
   */
  public static int run(String[] args, PrintStream out) throws InterruptedException {
    String target = DEFAULT_TARGET;
    Map<String, File> files = new HashMap<>();
    Path tokenFile = null;
    for (int i = 0; i < args.length; i++) {
      if (List.of("--cacert", "--cert", "--key").contains(args[i]) && i + 1 < args.length) {
        files.put(args[i], new File(args[++i]));
      } else if (args[i].equals("--token-file") && i + 1 < args.length) {
        tokenFile = Path.of(args[++i]);
      } else if (!args[i].startsWith("-")) {
        target = args[i];
      } else {
        return usage(out);
      }
    }
    if (files.containsKey("--cert") != files.containsKey("--key")
        || (files.containsKey("--cert") && !files.containsKey("--cacert"))) {
      return usage(out);
    }
    ChannelCredentials credentials;
    try {
      credentials = credentials(files);
    } catch (IOException e) {
      out.println("demo data: failed: cannot read " + e.getMessage());
      return 1;
    }
    NettyChannelBuilder builder = NettyChannelBuilder.forTarget(target, credentials);
    if (tokenFile != null) {
      try {
        Metadata headers = new Metadata();
        headers.put(AUTHORIZATION, "Bearer " + Files.readString(tokenFile).strip());
        builder.intercept(MetadataUtils.newAttachHeadersInterceptor(headers));
      } catch (IOException e) {
        out.println("demo data: failed: cannot read the token file " + tokenFile);
        return 1;
      }
    }
    ManagedChannel channel = builder.build();
    try {
      awaitServing(channel, out);
      int written = load(channel, RetryingCalls.sleeping(out));
      out.println("demo data: target=" + target + " written=" + written + " (0 means it was all there already)");
      return 0;
    } catch (StatusRuntimeException | IllegalStateException e) {
      out.println("demo data: failed: " + e.getMessage());
      return 1;
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static int usage(PrintStream out) {
    out.println("usage: load-demo-data [--cacert FILE [--cert FILE --key FILE]] [--token-file FILE] [host:port]");
    return 2;
  }

  private static ChannelCredentials credentials(Map<String, File> files) throws IOException {
    if (!files.containsKey("--cacert")) {
      return InsecureChannelCredentials.create();
    }
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder().trustManager(files.get("--cacert"));
    if (files.containsKey("--cert")) {
      tls.keyManager(files.get("--cert"), files.get("--key"));
    }
    return tls.build();
  }

  /**
   * Writes what is missing; returns how many writes it made. Each call is asked again while it is answered
   * "not now" ({@link RetryingCalls}): a refusal under load, a throttled table or a restarting instance.
   */
  static int load(ManagedChannel channel, RetryingCalls retrying) {
    InventoryServiceGrpc.InventoryServiceBlockingStub inventory = InventoryServiceGrpc.newBlockingStub(channel);
    OrderServiceGrpc.OrderServiceBlockingStub orders = OrderServiceGrpc.newBlockingStub(channel);
    int written = 0;
    if (absent(() -> retrying.call("GetSerialItem", () -> inventory.withDeadlineAfter(5, TimeUnit.SECONDS)
        .getSerialItem(GetSerialItemRequest.newBuilder().setSerialNumber("SN-98471").setConsistentRead(true).build())))) {
      // A put of the same item: repeating it after a lost answer changes nothing.
      retrying.call("PutSerialItem", () -> inventory.withDeadlineAfter(5, TimeUnit.SECONDS)
          .putSerialItem(PutSerialItemRequest.newBuilder()
              .setItem(SerialItem.newBuilder().setSerialNumber("SN-98471").setProductId("P100").setWarehouseId("W1")
                  .setDescription("Pallet jack, serial SN-98471"))
              .build()));
      written++;
    }
    long[] quantities = {40, 25, 2};
    long[] reorderPoints = {0, 0, 10};
    String[] warehouses = {"W1", "W2", "W3"};
    for (int i = 0; i < warehouses.length; i++) {
      String warehouse = warehouses[i];
      ProductInventory stock = ProductInventory.newBuilder().setProductId("P100").setWarehouseId(warehouse)
          .setQuantity(quantities[i]).setReorderPoint(reorderPoints[i]).build();
      if (absent(() -> retrying.call("GetProductInventory", () -> inventory.withDeadlineAfter(5, TimeUnit.SECONDS)
          .getProductInventory(GetProductInventoryRequest.newBuilder().setProductId("P100").setWarehouseId(warehouse)
              .setConsistentRead(true).build())))) {
        retrying.call("PutProductInventory", () -> inventory.withDeadlineAfter(5, TimeUnit.SECONDS)
            .putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(stock).build()));
        written++;
      }
    }
    for (DemoOrder order : ORDERS) {
      if (absent(() -> retrying.call("GetOrder", () -> orders.withDeadlineAfter(5, TimeUnit.SECONDS)
          .getOrder(GetOrderRequest.newBuilder().setOrderId(order.orderId()).setConsistentRead(true).build())))) {
        // A fixed request id: two loaders racing, or one repeating a call, place the order once.
        retrying.call("PlaceOrder", () -> orders.withDeadlineAfter(10, TimeUnit.SECONDS)
            .placeOrder(PlaceOrderRequest.newBuilder()
                .setCustomerId("C4821").setOrderId(order.orderId()).setOrderDate(order.date())
                .addLines(OrderLine.newBuilder().setProductId("P100").setWarehouseId(order.warehouse())
                    .setQuantity(order.quantity())
                    .setUnitPrice(Money.newBuilder().setCurrencyCode("EUR").setUnits(order.units()).setNanos(order.nanos())))
                .setRequestId("demo-" + order.orderId())
                .build()));
        written++;
      }
    }
    return written;
  }

  private static boolean absent(Supplier<?> read) {
    try {
      read.get();
      return false;
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
        return true;
      }
      throw e;
    }
  }

  private static void awaitServing(ManagedChannel channel, PrintStream out) throws InterruptedException {
    HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
    long giveUp = System.currentTimeMillis() + WAIT_FOR_SERVICES_MS;
    for (String service : List.of("warehouse.inventory.v1.InventoryService", "warehouse.order.v1.OrderService")) {
      while (true) {
        try {
          if (health.withDeadlineAfter(2, TimeUnit.SECONDS).check(HealthCheckRequest.newBuilder().setService(service).build())
              .getStatus() == ServingStatus.SERVING) {
            break;
          }
        } catch (StatusRuntimeException notYet) {
          // the gateway itself may still be starting
        }
        if (System.currentTimeMillis() > giveUp) {
          throw new IllegalStateException(service + " is not serving after " + WAIT_FOR_SERVICES_MS / 1000 + " s");
        }
        Thread.sleep(250);
      }
    }
    out.println("demo data: services are serving");
  }
}
