package dev.warehouse.order.domain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.domain.StockReservations.State;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.FailedPreconditionException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.testing.TestClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * PlaceOrder against inventory answers that OrderStockTest does not reach on moto: a hold released before
 * its confirm, a line not stocked at its warehouse, and stock contended past the inventory's rounds. Each
 * decides the order's fate (REJECTED, or left PENDING for a retry) and what every retry answers.
 */
class PlaceOrderStockTest {

  private static final Instant T0 = Instant.parse("2026-12-05T09:00:00Z");
  private static final Money EUR_10 = new Money("EUR", 10, 0);

  private final TestClock clock = new TestClock(T0);
  private final InMemoryOrders orders = new InMemoryOrders();
  private final ScriptedStock stock = new ScriptedStock();
  private final OrderService service = new OrderService(orders, stock, clock, wait -> new CompletableFuture<>(),
      new SagaTimings(Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(1)), new SimpleMeterRegistry());

  private static PlaceOrderCommand buying(OrderLine... lines) {
    Money total = Money.zero("EUR");
    for (OrderLine line : lines) {
      total = total.plus(line.amount());
    }
    return new PlaceOrderCommand("C-1", Optional.of("O-1"), Optional.empty(), List.of(lines), total, "req-1");
  }

  private static Throwable failureOf(CompletableFuture<?> call) {
    assertThat(call).isCompletedExceptionally();
    return Failures.cause(call.handle((ok, failure) -> failure).join());
  }

  @Test
  void aHoldReleasedBeforeItsConfirm_rejectsTheOrder_holdExpired_andEveryRetryAnswersTheSame() {
    // The inventory's expiry loop releases the hold between the order's reserve and its confirm.
    stock.before = (operation, orderId) -> {
      if (operation.equals("confirm")) {
        stock.states.put(orderId, State.RELEASED);
      }
    };
    PlaceOrderCommand command = buying(new OrderLine("P-1", "W-1", 2, EUR_10));

    Throwable refused = failureOf(service.placeOrder(command));

    assertThat(refused).isInstanceOfSatisfying(FailedPreconditionException.class,
        e -> assertThat(e.reason()).isEqualTo(Rejection.HOLD_EXPIRED));
    Order rejected = orders.get("O-1");
    assertThat(rejected.status()).isEqualTo(OrderStatus.REJECTED);
    assertThat(rejected.rejection()).map(Rejection::reason).contains(Rejection.HOLD_EXPIRED);
    assertThat(rejected.pending()).as("nothing left for the recovery").isEmpty();
    assertThat(stock.calls).containsExactly("reserve O-1", "confirm O-1", "release O-1");
    assertThat(stock.states.get("O-1")).isEqualTo(State.RELEASED);

    // A retry of the same request answers the same end, and asks the inventory for nothing.
    assertThat(failureOf(service.placeOrder(command))).isInstanceOfSatisfying(FailedPreconditionException.class,
        e -> assertThat(e.reason()).isEqualTo(Rejection.HOLD_EXPIRED));
    assertThat(stock.calls).hasSize(3);
  }

  @Test
  void aLineNotStockedAtItsWarehouse_rejectsTheOrder_notFound_namingTheLine_andEveryRetryAnswersTheSame() {
    stock.failing = (operation, orderId) -> operation.equals("reserve")
        ? Optional.of(new NotStockedException("P-9", "W-2")) : Optional.empty();
    PlaceOrderCommand command = buying(new OrderLine("P-1", "W-1", 2, EUR_10), new OrderLine("P-9", "W-2", 3, EUR_10));

    Throwable refused = failureOf(service.placeOrder(command));

    assertThat(refused).isInstanceOfSatisfying(NotStockedException.class, e -> {
      assertThat(e.reason()).isEqualTo("PRODUCT_INVENTORY_NOT_FOUND");
      assertThat(e.metadata()).isEqualTo(Map.of("product_id", "P-9", "warehouse_id", "W-2"));
    });
    Order rejected = orders.get("O-1");
    assertThat(rejected.status()).isEqualTo(OrderStatus.REJECTED);
    assertThat(rejected.rejection()).contains(new Rejection(Rejection.NOT_STOCKED, List.of(new Shortage("P-9", "W-2", 3, 0))));
    // The fence: a tombstone, so that a late hold of this order fails.
    assertThat(stock.calls).containsExactly("reserve O-1", "release O-1");
    assertThat(stock.states.get("O-1")).isEqualTo(State.TOMBSTONE);

    assertThat(failureOf(service.placeOrder(command))).isInstanceOfSatisfying(NotStockedException.class,
        e -> assertThat(e.productId()).isEqualTo("P-9"));
    assertThat(stock.calls).hasSize(2);
  }

  @Test
  void aHoldTooLargeForOneTransaction_rejectsTheOrder_withThatReason_andEveryRetryAnswersTheSame() {
    stock.failing = (operation, orderId) -> operation.equals("reserve")
        ? Optional.of(new FailedPreconditionException(StockReservations.TOO_LARGE, "too many items", Map.of()))
        : Optional.empty();
    PlaceOrderCommand command = buying(new OrderLine("P-1", "W-1", 2, EUR_10));

    assertThat(failureOf(service.placeOrder(command))).isInstanceOfSatisfying(FailedPreconditionException.class,
        e -> assertThat(e.reason()).isEqualTo(Rejection.TOO_LARGE));
    Order rejected = orders.get("O-1");
    assertThat(rejected.status()).isEqualTo(OrderStatus.REJECTED);
    assertThat(rejected.rejection()).map(Rejection::reason).contains(Rejection.TOO_LARGE);
    assertThat(stock.calls).containsExactly("reserve O-1", "release O-1");

    assertThat(failureOf(service.placeOrder(command))).isInstanceOfSatisfying(FailedPreconditionException.class,
        e -> assertThat(e.reason()).isEqualTo(Rejection.TOO_LARGE));
    assertThat(stock.calls).hasSize(2);
  }

  @Test
  void stockContendedPastTheInventorysRounds_leavesTheOrderPending_andTheSameRequestPlacesItLater() {
    stock.failing = (operation, orderId) -> operation.equals("reserve")
        ? Optional.of(new AbortedException("STOCK_CONTENDED", "the stock is changing too often to hold it now",
            Map.of("order_id", orderId), Optional.of(Duration.ofMillis(250))))
        : Optional.empty();
    PlaceOrderCommand command = buying(new OrderLine("P-1", "W-1", 2, EUR_10));

    Throwable contended = failureOf(service.placeOrder(command));

    assertThat(contended).isInstanceOfSatisfying(AbortedException.class, e -> {
      assertThat(e.reason()).isEqualTo("STOCK_CONTENDED");
      assertThat(e.retryDelay()).contains(Duration.ofMillis(250));
    });
    Order pending = orders.get("O-1");
    assertThat(pending.status()).as("nothing decided: no fence, no rejection").isEqualTo(OrderStatus.PENDING);
    assertThat(pending.pending()).map(PendingStep::step).contains(StockStep.PLACE);
    assertThat(stock.calls).containsExactly("reserve O-1");
    assertThat(stock.states).doesNotContainKey("O-1");

    stock.failing = (operation, orderId) -> Optional.empty();
    Order placed = service.placeOrder(command).join();

    assertThat(placed.status()).isEqualTo(OrderStatus.PLACED);
    assertThat(placed.version()).isEqualTo(1);
    assertThat(stock.states.get("O-1")).isEqualTo(State.CONFIRMED);
    assertThat(stock.calls).containsExactly("reserve O-1", "reserve O-1", "confirm O-1");
  }
}
