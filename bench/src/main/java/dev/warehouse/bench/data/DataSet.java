package dev.warehouse.bench.data;

import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.SerialItem;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.store.OrderItems;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * A benchmark data set of about {@code items} table items, in the services' own item format: a
 * quarter serial items, a quarter stock items (each product in 3 of {@link #WAREHOUSES} warehouses),
 * half orders (two copies each, 5 orders per customer). Keys are derived from an index, so load
 * generators can address any of them.
 */
public final class DataSet {

  public static final int WAREHOUSES = 10;
  public static final int ORDERS_PER_CUSTOMER = 5;
  private static final int BATCH = 25;
  private static final Instant LOADED = Instant.parse("2026-11-01T00:00:00Z");

  public final int serials;
  public final int products;
  public final int customers;

  public DataSet(int items) {
    this.serials = Math.max(1, items / 4);
    this.products = Math.max(1, items / 12);
    this.customers = Math.max(1, items / (4 * ORDERS_PER_CUSTOMER));
  }

  public int items() {
    return serials + 3 * products + 2 * ORDERS_PER_CUSTOMER * customers;
  }

  public static String serial(int i) {
    return String.format("SN-%07d", i);
  }

  public static String product(int i) {
    return String.format("P-%06d", i);
  }

  /** The j-th (0..2) warehouse of product i. */
  public static String warehouseOf(int product, int j) {
    return warehouse((product + j) % WAREHOUSES);
  }

  public static String warehouse(int w) {
    return String.format("W-%02d", w);
  }

  public static String customer(int i) {
    return String.format("C-%06d", i);
  }

  public static String order(int customer, int k) {
    return String.format("O-%06d-%d", customer, k);
  }

  public static LocalDate orderDate(int k) {
    return LocalDate.of(2026, 7, 1).plusDays(k * 6L);
  }

  /** Writes the data set with BatchWriteItem, a few batches in flight; returns the seconds it took. */
  public double load(DynamoDbAsyncClient dynamo, String table) throws InterruptedException {
    long started = System.nanoTime();
    List<Map<String, AttributeValue>> items = new ArrayList<>(items());
    for (int i = 0; i < serials; i++) {
      items.add(serialItem(i));
    }
    for (int p = 0; p < products; p++) {
      for (int j = 0; j < 3; j++) {
        items.add(stockItem(p, j));
      }
    }
    for (int c = 0; c < customers; c++) {
      for (int k = 0; k < ORDERS_PER_CUSTOMER; k++) {
        items.add(OrderItems.directItem(loadedOrder(c, k)));
        items.add(OrderItems.corridorItem(loadedOrder(c, k)));
      }
    }
    putAll(dynamo, table, items);
    return (System.nanoTime() - started) / 1e9;
  }

  /** One item of each kind the data set holds, as loaded (the first of each), by kind. */
  public Map<String, Map<String, AttributeValue>> samples() {
    Map<String, Map<String, AttributeValue>> samples = new java.util.LinkedHashMap<>();
    samples.put("serial item", serialItem(0));
    samples.put("stock record", stockItem(0, 0));
    samples.put("order, direct copy", OrderItems.directItem(loadedOrder(0, 0)));
    samples.put("order, customer's copy", OrderItems.corridorItem(loadedOrder(0, 0)));
    return samples;
  }

  private Map<String, AttributeValue> serialItem(int i) {
    return InventoryItems.toItem(new SerialItem(serial(i), product(i % products), warehouseOf(i % products, 0),
        "bench item " + i, LOADED));
  }

  private static Map<String, AttributeValue> stockItem(int p, int j) {
    return InventoryItems.toItem(new ProductInventory(product(p), warehouseOf(p, j), 1_000_000, 0, LOADED));
  }

  private static Order loadedOrder(int c, int k) {
    // Loaded as orders from before lines existed: no stock of theirs is held, and none moves when they change.
    return new Order(order(c, k), customer(c), orderDate(k), OrderStatus.PLACED, new Money("EUR", 10 + k, 0), 1, LOADED, LOADED,
        List.of(), 0, Optional.empty(), Optional.empty());
  }

  /** Writes {@code items} with BatchWriteItem, a few batches in flight, and waits for all of them. */
  public static void putAll(DynamoDbAsyncClient dynamo, String table, List<Map<String, AttributeValue>> items)
      throws InterruptedException {
    Semaphore inFlight = new Semaphore(4);
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    for (int from = 0; from < items.size(); from += BATCH) {
      pending.add(write(dynamo, table, items.subList(from, Math.min(items.size(), from + BATCH)), inFlight));
    }
    CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
  }

  private static CompletableFuture<Void> write(DynamoDbAsyncClient dynamo, String table,
      List<Map<String, AttributeValue>> items, Semaphore inFlight) throws InterruptedException {
    inFlight.acquire();
    List<WriteRequest> writes = items.stream()
        .map(item -> WriteRequest.builder().putRequest(PutRequest.builder().item(item).build()).build())
        .toList();
    return writeAll(dynamo, table, writes).whenComplete((ok, e) -> inFlight.release());
  }

  /** Writes, re-sending what DynamoDB reports as unprocessed. */
  private static CompletableFuture<Void> writeAll(DynamoDbAsyncClient dynamo, String table, List<WriteRequest> writes) {
    Map<String, List<WriteRequest>> request = new HashMap<>();
    request.put(table, writes);
    return dynamo.batchWriteItem(b -> b.requestItems(request)).thenCompose(response -> {
      List<WriteRequest> left = response.hasUnprocessedItems() ? response.unprocessedItems().getOrDefault(table, List.of()) : List.of();
      return left.isEmpty() ? CompletableFuture.completedFuture(null) : writeAll(dynamo, table, left);
    });
  }
}
