package dev.warehouse.bench.standin;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.SerialItem;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.store.ReservationItems;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.store.OrderItems;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A DynamoDB endpoint with canned answers, built once, in the services' own item format: GetItem,
 * Query (table and index), TransactWriteItems, the BatchGetItem and UpdateItem of holding an order's stock,
 * and DescribeTable, answered in microseconds. With the
 * emulator's milliseconds of jitter out of the way, the layer scenario can resolve what the service
 * and the gateway add to a DynamoDB call. The answers depend only on the route a request takes (the
 * key prefix and the index), not on the key's value: this measures layers, not a store. Its writes are
 * held to DynamoDB's 1,000 write units a second per partition key ({@link KeyThroughput}): past them a
 * transaction is cancelled with {@code ThrottlingError} on its hot items, and a single write answers
 * {@code ThrottlingException}, as DynamoDB does, so one hot item tops out here where it would there.
 */
public final class StandInDynamo implements AutoCloseable {

  private static final Instant LOADED = Instant.parse("2026-11-01T00:00:00Z");
  private static final String JSON = "application/x-amz-json-1.0";

  private final Channel server;
  private final EventLoopGroup eventLoop;
  private final byte[] serial;
  private final byte[] stock;
  private final byte[] order;
  /** The answer of a GetItem that finds nothing, and of a transaction that succeeds. */
  private final byte[] empty = bytes("{}");
  private final byte[] warehousesOfProduct;
  private final byte[] productsInWarehouse;
  private final byte[] ordersOfCustomer;
  private final byte[] tableActive;
  private final byte[] noItems;
  private final KeyThroughput writes = new KeyThroughput(KeyThroughput.DYNAMODB_WRITE_UNITS);

  private StandInDynamo(String table) throws InterruptedException {
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
    this.noItems = query(List.of(), table);
    this.tableActive = bytes("{\"Table\":{\"TableName\":\"" + table + "\",\"TableStatus\":\"ACTIVE\"}}");
    // One I/O thread answers on the spot: no hand-off, so the stand-in adds as little time and jitter as it can.
    this.eventLoop = new NioEventLoopGroup(1, new DefaultThreadFactory("standin-dynamodb", true));
    this.server = new ServerBootstrap().group(eventLoop).channel(NioServerSocketChannel.class)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20), new Handler());
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
  }

  /** Serves on a free loopback port, answering for {@code table}. */
  public static StandInDynamo start(String table) throws InterruptedException {
    return new StandInDynamo(table);
  }

  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort());
  }

  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      String target = String.valueOf(request.headers().get("X-Amz-Target"));
      String operation = target.substring(target.indexOf('.') + 1);
      String body = request.content().toString(StandardCharsets.UTF_8);
      byte[] answer = throttled(operation, body);
      HttpResponseStatus status = answer == null ? HttpResponseStatus.OK : HttpResponseStatus.BAD_REQUEST;
      answer = answer != null ? answer : answer(operation, body);
      if (answer == null) {
        status = HttpResponseStatus.BAD_REQUEST;
        answer = bytes("{\"__type\":\"com.amazonaws.dynamodb.v20120810#ValidationException\","
            + "\"message\":\"the stand-in has no canned answer for " + target + "\"}");
      }
      FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(answer));
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, JSON).setInt(HttpHeaderNames.CONTENT_LENGTH, answer.length);
      ctx.writeAndFlush(response);
    }
  }

  private byte[] answer(String operation, String body) {
    return switch (operation) {
      case "GetItem" -> switch (partitionPrefix(body)) {
        case "SERIAL" -> serial;
        case "PRODUCT" -> stock;
        case "ORDER" -> order;
        default -> empty;
      };
      // The recovery's A10 and the expiry loop's A9 find nothing owed: every order here is placed at once.
      case "Query" -> body.contains("\"S\":\"ORDER_TASKS#") || body.contains("\"S\":\"HOLDS#") ? noItems
          : body.contains("\"IndexName\"") ? productsInWarehouse
          : body.contains("\"S\":\"CUSTOMER#") ? ordersOfCustomer : warehousesOfProduct;
      case "TransactWriteItems" -> empty;
      // An order's stock, held (BatchGetItem reads its records) and confirmed (an UpdateItem of its reservation).
      case "BatchGetItem" -> stockOfKeys(body);
      case "UpdateItem" -> body.contains("\"S\":\"RESERVATION#") ? confirmed(body) : empty;
      case "DescribeTable" -> tableActive;
      default -> null;
    };
  }

  /**
   * DynamoDB's answer to a write past its keys' units (null: served): a transaction's items take two units
   * each from their partition keys, a PutItem or UpdateItem one.
   */
  private byte[] throttled(String operation, String body) {
    boolean transaction = operation.equals("TransactWriteItems");
    if (!transaction && !operation.equals("PutItem") && !operation.equals("UpdateItem")) {
      return null;
    }
    List<String> keys = partitionKeys(body);
    java.util.Set<String> hot = writes.take(keys, transaction ? 2 : 1, System.nanoTime());
    if (hot.isEmpty()) {
      return null;
    }
    if (!transaction) {
      return bytes("{\"__type\":\"com.amazonaws.dynamodb.v20120810#ThrottlingException\","
          + "\"message\":\"Throughput exceeds the current throughput limit for one partition key of your table\"}");
    }
    List<String> reasons = keys.stream().map(k -> hot.contains(k)
        ? "{\"Code\":\"ThrottlingError\",\"Message\":\"Throughput exceeds the current capacity of your table or index.\"}"
        : "{\"Code\":\"None\"}").toList();
    return bytes("{\"__type\":\"com.amazonaws.dynamodb.v20120810#TransactionCanceledException\","
        + "\"Message\":\"Transaction cancelled, please refer cancellation reasons for specific reasons\","
        + "\"CancellationReasons\":[" + String.join(",", reasons) + "]}");
  }

  /** The partition-key value of every item a write names, in order: {@code "PK":{"S":"..."}}, once per item. */
  private static List<String> partitionKeys(String body) {
    List<String> keys = new ArrayList<>();
    String marker = "\"PK\":{\"S\":\"";
    for (int at = body.indexOf(marker); at >= 0; at = body.indexOf(marker, at + 1)) {
      int start = at + marker.length();
      keys.add(body.substring(start, body.indexOf('"', start)));
    }
    return keys;
  }

  /** A BatchGetItem's answer: a stock record (1,000 units, nothing reserved) for every key it asks for. */
  private static byte[] stockOfKeys(String body) {
    com.google.gson.JsonObject tables = com.google.gson.JsonParser.parseString(body).getAsJsonObject()
        .getAsJsonObject("RequestItems");
    StringBuilder responses = new StringBuilder();
    for (String tableName : tables.keySet()) {
      List<String> items = new ArrayList<>();
      for (com.google.gson.JsonElement key : tables.getAsJsonObject(tableName).getAsJsonArray("Keys")) {
        String pk = key.getAsJsonObject().getAsJsonObject("PK").get("S").getAsString();
        String sk = key.getAsJsonObject().getAsJsonObject("SK").get("S").getAsString();
        items.add(DynamoJson.item(InventoryItems.toItem(new ProductInventory(pk.substring(pk.indexOf('#') + 1),
            sk.substring(sk.indexOf('#') + 1), 1_000, 0, LOADED))));
      }
      responses.append(responses.length() == 0 ? "" : ",").append(DynamoJson.string(tableName)).append(":[")
          .append(String.join(",", items)).append("]");
    }
    return bytes("{\"Responses\":{" + responses + "},\"UnprocessedKeys\":{}}");
  }

  /** An UpdateItem's answer for a reservation: the order's reservation, CONFIRMED (ReturnValues ALL_NEW). */
  private static byte[] confirmed(String body) {
    String pk = com.google.gson.JsonParser.parseString(body).getAsJsonObject().getAsJsonObject("Key")
        .getAsJsonObject("PK").get("S").getAsString();
    Reservation reservation = new Reservation(pk.substring(pk.indexOf('#') + 1), Reservation.State.CONFIRMED,
        List.of(new ReservationLine(DataSet.product(0), DataSet.warehouseOf(0, 0), 1)), LOADED, Optional.empty(), LOADED,
        LOADED);
    return bytes("{\"Attributes\":" + DynamoJson.item(ReservationItems.toItem(reservation)) + "}");
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
    return InventoryItems.toItem(new ProductInventory(DataSet.product(product), DataSet.warehouseOf(product, j), 1_000, 0, LOADED));
  }

  private static Order order(int k) {
    return new Order(DataSet.order(0, k), DataSet.customer(0), DataSet.orderDate(k), OrderStatus.PLACED,
        new Money("EUR", 10 + k, 0), 1, LOADED, LOADED, java.util.List.of(), 0, java.util.Optional.empty(), java.util.Optional.empty());
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
    server.close().syncUninterruptibly();
    eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
