package dev.warehouse.order.domain;

import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.paging.Page;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * {@link OrderRepository} in memory, for the domain's unit tests: answers at once, with the conditions of
 * the DynamoDB implementation (a change only at the version read). The A10 listing resumes after the last
 * key it handed out, as DynamoDB's exclusive start key does, so orders finished between two pages do not
 * shift the next page. A test can step into a listing or a read ({@link #listing}, {@link #finding}) to
 * hold it back, fail it, or throw.
 */
public final class InMemoryOrders implements OrderRepository {

  /** What a listing or a read answers, given the page token or order id and the stored answer. */
  public interface Step<K, T> {
    CompletableFuture<T> answer(K key, Supplier<CompletableFuture<T>> stored);
  }

  private record RequestRecord(String orderId, String fingerprint) {}

  private static final Comparator<Order> BY_DUE =
      Comparator.comparing((Order o) -> o.pending().orElseThrow().due()).thenComparing(Order::orderId);

  private final Map<String, Order> orders = new ConcurrentHashMap<>();
  private final Map<String, RequestRecord> requests = new ConcurrentHashMap<>();
  /** The page token of every A10 listing asked for, in order. */
  public final List<String> listedTokens = new CopyOnWriteArrayList<>();
  public final List<Integer> listedPageSizes = new CopyOnWriteArrayList<>();
  public volatile Step<String, Page<Order>> listing = (token, stored) -> stored.get();
  public volatile Step<String, Optional<Order>> finding = (orderId, stored) -> stored.get();

  /** Stores {@code order} as it is (both copies), as if a caller had written it. */
  public void put(Order order) {
    orders.put(order.orderId(), order);
  }

  public Order get(String orderId) {
    return orders.get(orderId);
  }

  @Override
  public CompletableFuture<Order> create(Order order, PlaceOrderCommand command, Instant now) {
    String key = command.customerId() + "#" + command.requestId();
    RequestRecord record = requests.get(key);
    if (record != null) {
      if (!record.fingerprint().equals(command.fingerprint())) {
        return CompletableFuture.failedFuture(command.requestIdReused());
      }
      return CompletableFuture.completedFuture(orders.get(record.orderId()));
    }
    if (orders.containsKey(order.orderId())) {
      return CompletableFuture.failedFuture(new AlreadyExistsException("ORDER_ALREADY_EXISTS",
          "order " + order.orderId() + " already exists", Map.of("order_id", order.orderId())));
    }
    orders.put(order.orderId(), order);
    requests.put(key, new RequestRecord(order.orderId(), command.fingerprint()));
    return CompletableFuture.completedFuture(order);
  }

  @Override
  public CompletableFuture<Optional<Order>> find(String orderId, boolean consistentRead) {
    return finding.answer(orderId, () -> CompletableFuture.completedFuture(Optional.ofNullable(orders.get(orderId))));
  }

  @Override
  public CompletableFuture<Page<Order>> listByCustomer(String customerId, OrderPageQuery query) {
    throw new UnsupportedOperationException("not used by these tests");
  }

  @Override
  public CompletableFuture<Order> finishPlacing(Order current, Order finished) {
    return atVersion(current, finished);
  }

  @Override
  public CompletableFuture<Order> changeStatus(Order current, Order updated) {
    return atVersion(current, updated);
  }

  private synchronized CompletableFuture<Order> atVersion(Order current, Order updated) {
    Order stored = orders.get(current.orderId());
    if (stored == null || stored.version() != current.version()) {
      return CompletableFuture.failedFuture(new StaleOrderException(current.orderId()));
    }
    orders.put(current.orderId(), updated);
    return CompletableFuture.completedFuture(updated);
  }

  @Override
  public synchronized CompletableFuture<Boolean> stepDone(Order order) {
    Order stored = orders.get(order.orderId());
    if (stored == null || stored.version() != order.version() || stored.pending().isEmpty()
        || stored.pending().get().step() != order.pending().orElseThrow().step()) {
      return CompletableFuture.completedFuture(false);
    }
    orders.put(order.orderId(), stored.stepDone());
    return CompletableFuture.completedFuture(true);
  }

  @Override
  public CompletableFuture<Page<Order>> listStalled(Instant now, int pageSize, String pageToken) {
    listedTokens.add(pageToken);
    listedPageSizes.add(pageSize);
    return listing.answer(pageToken, () -> CompletableFuture.completedFuture(page(now, pageSize, pageToken)));
  }

  private synchronized Page<Order> page(Instant now, int pageSize, String pageToken) {
    List<Order> due = orders.values().stream()
        .filter(o -> o.pending().isPresent() && !o.pending().get().due().isAfter(now))
        .filter(o -> pageToken.isEmpty() || after(o, pageToken))
        .sorted(BY_DUE)
        .toList();
    List<Order> items = due.subList(0, Math.min(pageSize, due.size()));
    return new Page<>(items, due.size() > pageSize ? key(items.get(items.size() - 1)) : "");
  }

  /** The last key of a page, as its token: due time and order id, the GSI1 sort key's order. */
  private static String key(Order order) {
    return order.pending().orElseThrow().due() + "#" + order.orderId();
  }

  private static boolean after(Order order, String token) {
    int cut = token.indexOf('#');
    Instant due = Instant.parse(token.substring(0, cut));
    int byDue = order.pending().orElseThrow().due().compareTo(due);
    return byDue > 0 || byDue == 0 && order.orderId().compareTo(token.substring(cut + 1)) > 0;
  }

  /** The orders still owing a step, by id. */
  public List<String> owing() {
    return orders.values().stream().filter(o -> o.pending().isPresent()).map(Order::orderId).sorted().toList();
  }
}
