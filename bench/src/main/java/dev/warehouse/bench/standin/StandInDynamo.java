package dev.warehouse.bench.standin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.warehouse.bench.data.DataSet;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.SerialItem;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.store.OrderItems;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.IntStream;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A DynamoDB endpoint with canned answers, built once, in the services' own item format: GetItem,
 * Query (table and index), TransactWriteItems and DescribeTable, answered in microseconds. With the
 * emulator's milliseconds of jitter out of the way, the layer scenario can resolve what the service
 * and the gateway add to a DynamoDB call. The answers depend only on the route a request takes (the
 * key prefix and the index), not on the key's value: this measures layers, not a store.
 */
public final class StandInDynamo implements AutoCloseable {

  private static final Instant LOADED = Instant.parse("2026-11-01T00:00:00Z");
  private static final String JSON = "application/x-amz-json-1.0";

  private final HttpServer server;
  private final ExecutorService executor;
  private final byte[] serial;
  private final byte[] stock;
  private final byte[] order;
  private final byte[] notFound = bytes("{}");
  private final byte[] warehousesOfProduct;
  private final byte[] productsInWarehouse;
  private final byte[] ordersOfCustomer;
  private final byte[] tableActive;

  private StandInDynamo(HttpServer server, ExecutorService executor, String table) {
    this.server = server;
    this.executor = executor;
    Order placed = order(0);
    this.serial = getItem(InventoryItems.toItem(new SerialItem(DataSet.serial(0), DataSet.product(0),
        DataSet.warehouseOf(0, 0), "bench item 0", LOADED)), table);
    this.stock = getItem(stock(0, 0), table);
    this.order = getItem(OrderItems.directItem(placed), table);
    this.warehousesOfProduct = query(IntStream.range(0, 3).mapToObj(j -> stock(0, j)).toList(), table);
    // A page of 25 plus the one the services read to know that another page follows.
    this.productsInWarehouse = query(IntStream.range(0, 26).mapToObj(p -> stock(p, 0)).toList(), table);
    this.ordersOfCustomer = query(IntStream.range(0, DataSet.ORDERS_PER_CUSTOMER)
        .mapToObj(k -> OrderItems.corridorItem(order(k))).toList(), table);
    this.tableActive = bytes("{\"Table\":{\"TableName\":\"" + table + "\",\"TableStatus\":\"ACTIVE\"}}");
  }

  /** Serves on a free loopback port, answering for {@code table}. */
  public static StandInDynamo start(String table) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
    ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "standin-dynamodb");
      t.setDaemon(true);
      return t;
    });
    StandInDynamo standIn = new StandInDynamo(server, executor, table);
    server.createContext("/", standIn::handle);
    server.setExecutor(executor);
    server.start();
    return standIn;
  }

  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange; InputStream in = exchange.getRequestBody()) {
      String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      String target = String.valueOf(exchange.getRequestHeaders().getFirst("X-Amz-Target"));
      byte[] answer = answer(target.substring(target.indexOf('.') + 1), body);
      int status = 200;
      if (answer == null) {
        status = 400;
        answer = bytes("{\"__type\":\"com.amazonaws.dynamodb.v20120810#ValidationException\","
            + "\"message\":\"the stand-in has no canned answer for " + target + "\"}");
      }
      exchange.getResponseHeaders().set("Content-Type", JSON);
      exchange.sendResponseHeaders(status, answer.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(answer);
      }
    }
  }

  private byte[] answer(String operation, String body) {
    return switch (operation) {
      case "GetItem" -> switch (partitionPrefix(body)) {
        case "SERIAL" -> serial;
        case "PRODUCT" -> stock;
        case "ORDER" -> order;
        default -> notFound;
      };
      case "Query" -> body.contains("\"IndexName\"") ? productsInWarehouse
          : body.contains("\"S\":\"CUSTOMER#") ? ordersOfCustomer : warehousesOfProduct;
      case "TransactWriteItems" -> bytes("{}");
      case "DescribeTable" -> tableActive;
      default -> null;
    };
  }

  /** The prefix of the key's partition value in a GetItem body: {@code "PK":{"S":"SERIAL#..."}} gives SERIAL. */
  private static String partitionPrefix(String body) {
    String marker = "\"PK\":{\"S\":\"";
    int start = body.indexOf(marker);
    if (start < 0) {
      return "";
    }
    start += marker.length();
    int end = body.indexOf('#', start);
    return end < 0 ? "" : body.substring(start, end);
  }

  private static Map<String, AttributeValue> stock(int product, int j) {
    return InventoryItems.toItem(new ProductInventory(DataSet.product(product), DataSet.warehouseOf(product, j), 1_000, LOADED));
  }

  private static Order order(int k) {
    return new Order(DataSet.order(0, k), DataSet.customer(0), DataSet.orderDate(k), OrderStatus.PLACED,
        new Money("EUR", 10 + k, 0), 1, LOADED, LOADED);
  }

  private static byte[] getItem(Map<String, AttributeValue> item, String table) {
    return bytes("{\"Item\":" + DynamoJson.item(item) + ",\"ConsumedCapacity\":{\"TableName\":\"" + table
        + "\",\"CapacityUnits\":0.5}}");
  }

  private static byte[] query(List<Map<String, AttributeValue>> items, String table) {
    List<String> encoded = new ArrayList<>();
    items.forEach(item -> encoded.add(DynamoJson.item(item)));
    return bytes("{\"Items\":[" + String.join(",", encoded) + "],\"Count\":" + items.size() + ",\"ScannedCount\":"
        + items.size() + ",\"ConsumedCapacity\":{\"TableName\":\"" + table + "\",\"CapacityUnits\":1.0}}");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
