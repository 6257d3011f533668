package dev.warehouse.order.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.domain.InMemoryOrders;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OrderService;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.domain.PendingStep;
import dev.warehouse.order.domain.PlaceOrderCommand;
import dev.warehouse.order.domain.Rejection;
import dev.warehouse.order.domain.SagaTimings;
import dev.warehouse.order.domain.ScriptedStock;
import dev.warehouse.order.domain.StockReservations.State;
import dev.warehouse.order.domain.StockStep;
import dev.warehouse.runtime.error.UnavailableException;
import dev.warehouse.testing.TestClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The recovery loop, round by round, on an in-memory order store and a scripted inventory, with an injected
 * clock: it pages through every overdue order, never runs two rounds at once, and one order's failure (or a
 * listing's) costs only that order (or that round), never the loop.
 */
class OrderRecoveryTest {

  private static final Instant T0 = Instant.parse("2026-12-05T09:00:00Z");
  private static final Duration GRACE = Duration.ofSeconds(30);
  private static final Money EUR_10 = new Money("EUR", 10, 0);

  private final TestClock clock = new TestClock(T0);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final InMemoryOrders orders = new InMemoryOrders();
  private final ScriptedStock stock = new ScriptedStock();
  // The step budget's wait never ends here: each stock call answers at once, before it would matter.
  private final OrderService service = new OrderService(orders, stock, clock, wait -> new CompletableFuture<>(),
      new SagaTimings(GRACE, Duration.ofSeconds(60), Duration.ofSeconds(1)), meters);
  private final OrderRecovery recovery = new OrderRecovery(service, clock, meters);

  /** The n-th most overdue order: shipped, its COMMIT owed since before T0, its reservation confirmed. */
  private String owingCommit(int n) {
    String id = String.format("O-%03d", n);
    orders.put(new Order(id, "C-1", LocalDate.of(2026, 12, 4), OrderStatus.SHIPPED, EUR_10, 3, T0.minusSeconds(3600),
        T0.minusSeconds(600), List.of(new OrderLine("P-1", "W-1", 1, EUR_10)), 1, Optional.empty(),
        Optional.of(new PendingStep(StockStep.COMMIT, T0.minusSeconds(600).plusMillis(n)))));
    stock.states.put(id, State.CONFIRMED);
    return id;
  }

  private void owingCommits(int count) {
    for (int n = 1; n <= count; n++) {
      owingCommit(n);
    }
  }

  private double recoveries(String step, String outcome) {
    var counter = meters.find("order.recoveries").tags("step", step, "outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  private double gauge(String name) {
    return meters.get(name).gauge().value();
  }

  private double lastSuccess() {
    return gauge("order.recovery.last.success.timestamp");
  }

  private static double seconds(Instant t) {
    return t.toEpochMilli() / 1000.0;
  }

  @Test
  void aRound_goesOnPastTheFirstPage_andFinishesEveryOrder_the101stToo() {
    owingCommits(2 * OrderRecovery.PAGE_SIZE + 1);

    assertThat(recovery.round().join()).isEqualTo(201);

    assertThat(orders.owing()).isEmpty();
    assertThat(stock.states.get("O-101")).as("the first of the second page").isEqualTo(State.COMMITTED);
    assertThat(stock.states.get("O-201")).as("alone on the third page").isEqualTo(State.COMMITTED);
    assertThat(stock.states.values()).containsOnly(State.COMMITTED);
    assertThat(stock.calls).hasSize(201).doesNotHaveDuplicates();
    assertThat(orders.listedTokens).hasSize(3).first().isEqualTo("");
    assertThat(orders.listedPageSizes).containsOnly(OrderRecovery.PAGE_SIZE);
    assertThat(recoveries("commit", "finished")).isEqualTo(201);
    assertThat(gauge("order.stock.steps.overdue")).isEqualTo(201);
  }

  @Test
  void aTickWhileARoundIsStillGoing_startsNoSecondRound_andTheFirstTickAfterItEndsDoes() {
    owingCommits(150);
    // The second page's listing hangs until the test lets it go: the first round is still going.
    CompletableFuture<Void> secondPage = new CompletableFuture<>();
    orders.listing = (token, stored) -> token.isEmpty() ? stored.get() : secondPage.thenCompose(go -> stored.get());
    CompletableFuture<Integer> first = recovery.round();
    assertThat(first).isNotDone();
    assertThat(orders.listedTokens).hasSize(2);

    CompletableFuture<Integer> overlapping = recovery.round();

    assertThat(overlapping).isCompletedWithValue(0);
    assertThat(orders.listedTokens).as("the overlapping tick listed nothing").hasSize(2);
    assertThat(stock.calls).as("only the first round's first page").hasSize(100);

    secondPage.complete(null);
    assertThat(first).isCompletedWithValue(150);
    assertThat(stock.calls).hasSize(150).doesNotHaveDuplicates();
    assertThat(recovery.round()).isCompletedWithValue(0);
    assertThat(orders.listedTokens).as("the next tick after the round ended ran a round").hasSize(3);
  }

  @Test
  void aStockStepThatFails_isCountedAndLeftForTheNextRound_whileTheRestOfItsPageAndTheNextPageAreFinished() {
    owingCommits(150);
    AtomicBoolean inventoryDown = new AtomicBoolean(true);
    stock.failing = (operation, orderId) -> orderId.equals("O-050") && inventoryDown.get()
        ? Optional.of(new UnavailableException("INVENTORY_UNAVAILABLE", "the inventory-service could not move the stock now"))
        : Optional.empty();
    clock.advance(Duration.ofSeconds(10));

    assertThat(recovery.round().join()).isEqualTo(149);

    assertThat(orders.owing()).containsExactly("O-050");
    assertThat(stock.states.get("O-051")).as("after it on its page").isEqualTo(State.COMMITTED);
    assertThat(stock.states.get("O-150")).as("on the next page").isEqualTo(State.COMMITTED);
    assertThat(recoveries("commit", "failed")).isEqualTo(1);
    assertThat(recoveries("commit", "finished")).isEqualTo(149);
    assertThat(lastSuccess()).as("the round listed every page").isEqualTo(seconds(clock.instant()));

    inventoryDown.set(false);
    clock.advance(Duration.ofSeconds(10));
    assertThat(recovery.round().join()).isEqualTo(1);
    assertThat(orders.owing()).isEmpty();
    assertThat(stock.states.get("O-050")).isEqualTo(State.COMMITTED);
  }

  @Test
  void anOrderWhoseReadThrows_costsOnlyThatOrder_notTheRestOfItsPageNorTheNextPage() {
    owingCommits(150);
    AtomicBoolean broken = new AtomicBoolean(true);
    // A read that throws instead of failing its future: the recovery must still go on with the others.
    orders.finding = (orderId, stored) -> {
      if (orderId.equals("O-050") && broken.get()) {
        throw new IllegalStateException("the read of O-050 threw");
      }
      return stored.get();
    };

    assertThat(recovery.round().join()).isEqualTo(149);

    assertThat(orders.owing()).containsExactly("O-050");
    assertThat(recoveries("commit", "failed")).isEqualTo(1);
    assertThat(lastSuccess()).isEqualTo(seconds(clock.instant()));
    broken.set(false);
    assertThat(recovery.round().join()).isEqualTo(1);
    assertThat(orders.owing()).isEmpty();
  }

  @Test
  void aRoundWhoseListingFails_advancesNeitherTimestampNorOverdueCount_andTheNextRoundRuns() {
    owingCommits(150);
    orders.listing = (token, stored) -> token.isEmpty() ? stored.get()
        : CompletableFuture.failedFuture(new UnavailableException("DATABASE_UNAVAILABLE", "the query failed"));
    clock.advance(Duration.ofSeconds(10));

    // The round ends (its first page's orders were finished), but it did not list every page.
    assertThat(recovery.round()).isCompletedWithValue(100);
    assertThat(lastSuccess()).as("still the process's start").isEqualTo(seconds(T0));
    assertThat(gauge("order.stock.steps.overdue")).isZero();

    orders.listing = (token, stored) -> stored.get();
    clock.advance(Duration.ofSeconds(10));
    assertThat(recovery.round().join()).isEqualTo(50);
    assertThat(lastSuccess()).isEqualTo(seconds(T0.plusSeconds(20)));
    assertThat(gauge("order.stock.steps.overdue")).isEqualTo(50);
    assertThat(orders.owing()).isEmpty();
  }

  @Test
  void aListingThatThrows_failsOnlyItsRound_andTheNextTickRunsOne() {
    owingCommit(1);
    orders.listing = (token, stored) -> {
      throw new IllegalStateException("the listing threw");
    };

    // As the timer calls it: a round that cannot list ends, it does not throw or stay "running".
    assertThat(recovery.round()).isCompletedWithValue(0);
    assertThat(lastSuccess()).isEqualTo(seconds(T0));

    orders.listing = (token, stored) -> stored.get();
    clock.advance(Duration.ofSeconds(10));
    assertThat(recovery.round()).isCompletedWithValue(1);
    assertThat(orders.owing()).isEmpty();
    assertThat(lastSuccess()).isEqualTo(seconds(T0.plusSeconds(10)));
  }

  @ParameterizedTest
  @CsvSource({"RELEASED, HOLD_EXPIRED", "TOMBSTONE, ABANDONED"})
  void aPendingOrder_whoseReservationTheRecoveryFindsReleased_isRejected(State found, String reason) {
    orders.put(new Order("O-1", "C-1", LocalDate.of(2026, 12, 5), OrderStatus.PENDING, EUR_10, 0, T0, T0,
        List.of(new OrderLine("P-1", "W-1", 2, EUR_10)), 1, Optional.empty(),
        Optional.of(new PendingStep(StockStep.PLACE, T0.plus(GRACE)))));
    stock.states.put("O-1", found);
    clock.advance(GRACE);

    assertThat(recovery.round().join()).isEqualTo(1);

    Order rejected = orders.get("O-1");
    assertThat(rejected.status()).isEqualTo(OrderStatus.REJECTED);
    assertThat(rejected.rejection()).map(Rejection::reason).contains(reason);
    assertThat(rejected.version()).isEqualTo(1);
    assertThat(rejected.pending()).isEmpty();
    assertThat(stock.states.get("O-1")).as("nothing held again").isEqualTo(found);
    assertThat(stock.calls).containsExactly("find O-1");
    assertThat(recoveries("place", "finished")).isEqualTo(1);
  }

  @Test
  void aShippingCommitThatFailed_isMadeByTheRecoveryOnceDue_evenAfterTheDelivery() {
    Money total = new Money("EUR", 20, 0);
    service.placeOrder(new PlaceOrderCommand("C-1", Optional.of("O-1"), Optional.empty(),
        List.of(new OrderLine("P-1", "W-1", 2, EUR_10)), total, "req-1")).join();
    service.updateOrderStatus("O-1", OrderStatus.PAID, Optional.empty()).join();
    stock.failing = (operation, orderId) -> operation.equals("commit")
        ? Optional.of(new UnavailableException("INVENTORY_UNAVAILABLE", "the inventory-service could not move the stock now"))
        : Optional.empty();

    Order shipped = service.updateOrderStatus("O-1", OrderStatus.SHIPPED, Optional.empty()).join();
    assertThat(shipped.status()).isEqualTo(OrderStatus.SHIPPED);
    assertThat(shipped.pending()).map(PendingStep::step).contains(StockStep.COMMIT);
    service.updateOrderStatus("O-1", OrderStatus.DELIVERED, Optional.empty()).join();
    assertThat(orders.get("O-1").pending()).as("the delivery keeps the COMMIT owed").map(PendingStep::step)
        .contains(StockStep.COMMIT);
    stock.failing = (operation, orderId) -> Optional.empty();

    assertThat(recovery.round().join()).as("not due yet: the recovery leaves it alone").isZero();
    assertThat(stock.states.get("O-1")).isEqualTo(State.CONFIRMED);

    clock.advance(GRACE);
    assertThat(recovery.round().join()).isEqualTo(1);
    assertThat(stock.states.get("O-1")).isEqualTo(State.COMMITTED);
    Order delivered = orders.get("O-1");
    assertThat(delivered.status()).isEqualTo(OrderStatus.DELIVERED);
    assertThat(delivered.pending()).isEmpty();
    assertThat(recoveries("commit", "finished")).isEqualTo(1);
  }
}
