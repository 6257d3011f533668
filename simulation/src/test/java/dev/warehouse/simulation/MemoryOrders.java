package dev.warehouse.simulation;

import dev.warehouse.order.domain.DateFilter;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderPageQuery;
import dev.warehouse.order.domain.OrderRepository;
import dev.warehouse.order.domain.PlaceOrderCommand;
import dev.warehouse.order.domain.Rejection;
import dev.warehouse.order.domain.StaleOrderException;
import dev.warehouse.order.store.OrderKeys;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.InvalidArgumentException;
import dev.warehouse.runtime.paging.Page;
import java.time.Instant;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * {@link OrderRepository} in memory, with the conditions of its DynamoDB implementation: a create only
 * where neither the order nor its request record exists (a replay of the request answers the order as
 * it is), every change only at the version read. Both copies of an order are written together, so one
 * record stands for them; the customer listing answers the customer copy's summary of it.
 */
final class MemoryOrders implements OrderRepository {

  private record RequestRecord(String orderId, String fingerprint) {}

  /** What a page token of the stalled-order listing is bound to. */
  private static final String STALLED_SCOPE = OrderKeys.STALLED_ORDERS.patternId();

  private final MemoryDb db;
  final Map<String, Order> orders = new LinkedHashMap<>();
  private final Map<String, RequestRecord> requests = new LinkedHashMap<>();

  MemoryOrders(MemoryDb db) {
    this.db = db;
  }

  private static AbortedException conflict() {
    return new AbortedException("TRANSACTION_CONFLICT", "a conflicting transaction was in progress; retry");
  }

  @Override
  public CompletableFuture<Order> create(Order order, PlaceOrderCommand command, Instant now) {
    return db.write("create " + order.orderId(), MemoryOrders::conflict, () -> {
      String requestKey = command.customerId() + "#" + command.requestId();
      RequestRecord record = requests.get(requestKey);
      if (record != null) {
        if (!record.fingerprint().equals(command.fingerprint())) {
          throw command.requestIdReused();
        }
        return orders.get(record.orderId());
      }
      if (orders.containsKey(order.orderId())) {
        throw new AlreadyExistsException("ORDER_ALREADY_EXISTS", "order " + order.orderId() + " already exists",
            Map.of("order_id", order.orderId()));
      }
      orders.put(order.orderId(), order);
      requests.put(requestKey, new RequestRecord(order.orderId(), command.fingerprint()));
      return order;
    });
  }

  @Override
  public CompletableFuture<Optional<Order>> find(String orderId, boolean consistentRead) {
    return db.read("find " + orderId, () -> Optional.ofNullable(orders.get(orderId)));
  }

  @Override
  public CompletableFuture<Page<Order>> listByCustomer(String customerId, OrderPageQuery query) {
    return db.read("list orders of " + customerId, () -> {
      // The customer copies' sort keys (date, then id), filtered and ordered as the Query's key condition.
      Predicate<String> wanted;
      if (query.filter() instanceof DateFilter.Range range) {
        String from = range.start().map(OrderKeys::corridorFrom).orElse(OrderKeys.corridorPrefix(""));
        String until = range.end().map(OrderKeys::corridorUntil).orElse(OrderKeys.corridorEnd());
        wanted = sk -> sk.compareTo(from) >= 0 && sk.compareTo(until) <= 0;
      } else {
        String prefix = OrderKeys.corridorPrefix(query.filter() instanceof DateFilter.Prefix p ? p.prefix() : "");
        wanted = sk -> sk.startsWith(prefix);
      }
      List<Map.Entry<String, Order>> listed = orders.values().stream()
          .filter(o -> o.customerId().equals(customerId))
          .map(o -> Map.entry(OrderKeys.corridor(customerId, o.orderDate(), o.orderId()).sk(), summary(o)))
          .filter(e -> wanted.test(e.getKey()))
          .sorted(Map.Entry.<String, Order>comparingByKey().reversed())
          .toList();
      String scope = OrderKeys.ORDERS_OF_CUSTOMER.patternId() + "|" + OrderKeys.customerPk(customerId) + "|"
          + query.filter().canonical();
      return page(listed, Comparator.reverseOrder(), query.pageSize(), query.pageToken(), scope);
    });
  }

  /** What the customer's copy holds of an order: no lines, shortages or step, which only the direct copy has. */
  private static Order summary(Order order) {
    return new Order(order.orderId(), order.customerId(), order.orderDate(), order.status(), order.total(), order.version(),
        order.createTime(), order.updateTime(), List.of(), order.lineCount(),
        order.rejection().map(r -> new Rejection(r.reason(), List.of())), Optional.empty());
  }

  @Override
  public CompletableFuture<Order> finishPlacing(Order current, Order finished) {
    return atVersion("finish " + current.orderId(), current, finished);
  }

  @Override
  public CompletableFuture<Order> changeStatus(Order current, Order updated) {
    return atVersion("change " + current.orderId() + " to " + updated.status(), current, updated);
  }

  private CompletableFuture<Order> atVersion(String what, Order current, Order updated) {
    return db.write(what, MemoryOrders::conflict, () -> {
      Order stored = orders.get(current.orderId());
      if (stored == null) {
        throw new IllegalStateException("order " + current.orderId() + " lacks its copies");
      }
      if (stored.version() != current.version()) {
        throw new StaleOrderException(current.orderId());
      }
      // Only what the DynamoDB update sets: status, version, update time, a rejection, the step owed.
      orders.put(current.orderId(), new Order(stored.orderId(), stored.customerId(), stored.orderDate(), updated.status(),
          stored.total(), updated.version(), stored.createTime(), updated.updateTime(), stored.lines(), stored.lineCount(),
          updated.rejection().isPresent() ? updated.rejection() : stored.rejection(), updated.pending()));
      return updated;
    });
  }

  @Override
  public CompletableFuture<Boolean> stepDone(Order order) {
    return db.write("step done " + order.orderId(), MemoryOrders::conflict, () -> {
      Order stored = orders.get(order.orderId());
      if (stored == null || stored.version() != order.version() || stored.pending().isEmpty()
          || stored.pending().get().step() != order.pending().orElseThrow().step()) {
        return false;
      }
      orders.put(order.orderId(), stored.stepDone());
      return true;
    });
  }

  @Override
  public CompletableFuture<Page<Order>> listStalled(Instant now, int pageSize, String pageToken) {
    return db.read("list stalled", () -> {
      // The index's own keys: due to the millisecond, then the order id, listed while at or below now's.
      String until = OrderKeys.stepsDueBy(now);
      List<Map.Entry<String, Order>> due = orders.values().stream()
          .filter(o -> o.pending().isPresent())
          .map(o -> Map.entry(OrderKeys.stepSk(o.pending().get().due(), o.orderId()), o))
          .filter(e -> e.getKey().compareTo(until) <= 0)
          .sorted(Map.Entry.comparingByKey())
          .toList();
      return page(due, Comparator.naturalOrder(), pageSize, pageToken, STALLED_SCOPE);
    });
  }

  /**
   * One page of {@code listed} (sorted by key in {@code order}): as DynamoDB pages, it resumes after the
   * last key the previous page returned, so what changed meanwhile before that key moves nothing after
   * it; the token says which listing it belongs to, and is refused by any other.
   */
  private static Page<Order> page(List<Map.Entry<String, Order>> listed, Comparator<String> order, int pageSize,
      String pageToken, String scope) {
    List<Map.Entry<String, Order>> rest = listed;
    if (!pageToken.isEmpty()) {
      if (!pageToken.startsWith(scope + "\n")) {
        throw InvalidArgumentException.of("page_token", "is not a page token issued for this request");
      }
      String after = pageToken.substring(scope.length() + 1);
      rest = listed.stream().filter(e -> order.compare(e.getKey(), after) > 0).toList();
    }
    List<Map.Entry<String, Order>> page = rest.subList(0, Math.min(pageSize, rest.size()));
    String next = rest.size() > pageSize ? scope + "\n" + page.get(page.size() - 1).getKey() : "";
    return new Page<>(page.stream().map(Map.Entry::getValue).toList(), next);
  }
}
