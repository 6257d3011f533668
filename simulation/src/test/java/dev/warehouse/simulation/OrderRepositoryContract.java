package dev.warehouse.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.order.domain.DateFilter;
import dev.warehouse.order.domain.Money;
import dev.warehouse.order.domain.Order;
import dev.warehouse.order.domain.OrderLine;
import dev.warehouse.order.domain.OrderPageQuery;
import dev.warehouse.order.domain.OrderRepository;
import dev.warehouse.order.domain.OrderStatus;
import dev.warehouse.order.domain.PendingStep;
import dev.warehouse.order.domain.PlaceOrderCommand;
import dev.warehouse.order.domain.Rejection;
import dev.warehouse.order.domain.Shortage;
import dev.warehouse.order.domain.StaleOrderException;
import dev.warehouse.order.domain.StockStep;
import dev.warehouse.runtime.error.AbortedException;
import dev.warehouse.runtime.error.AlreadyExistsException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.error.InvalidArgumentException;
import dev.warehouse.runtime.paging.Page;
import dev.warehouse.testing.Eventually;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What every {@link OrderRepository} does, whatever stores it: its conditions (a create only where neither
 * the order nor its request exists, every change only at the version read), what a lost race returns,
 * all-or-nothing writes of the order's two copies (the direct one read by {@code find}, the customer's read
 * by {@code listByCustomer}), the step an order owes on each write, and both listings' order and pages. Run
 * against the simulation's in-memory repository and against the DynamoDB one on the strict moto, so the
 * fake the simulation trusts cannot drift from the real.
 */
abstract class OrderRepositoryContract {

  static final Instant T = Instant.parse("2026-12-05T09:00:00Z");
  static final LocalDate DAY = LocalDate.parse("2026-12-05");
  /**
   * The stalled-order listing lists every order of the store due by its {@code now}, so the test of its pages
   * keeps its orders due in a year no other test's are: only they can fill its pages.
   */
  static final Instant PAGING_ERA = Instant.parse("2001-01-01T00:00:00Z");
  /** The other listing test's own year, after the paging one's and before every other test's. */
  static final Instant LISTING_ERA = Instant.parse("2011-01-01T00:00:00Z");

  abstract OrderRepository repository();

  /** Waits for {@code call}'s outcome. */
  abstract <T> T await(CompletableFuture<T> call);

  /** Every transaction from now on cancelled by a conflict ({@code true}), or back to the suite's rate. */
  abstract void everyTransactionConflicts(boolean on);

  private static String id(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static final List<OrderLine> LINES = List.of(
      new OrderLine("P-1", "W1", 2, new Money("EUR", 5, 0)), new OrderLine("P-2", "W2", 1, new Money("EUR", 0, 500_000_000)));

  /** A PENDING order as PlaceOrder writes it: version 0, owing its PLACE step from {@code due}. */
  private static Order pending(String orderId, String customerId, LocalDate date, Instant due) {
    return new Order(orderId, customerId, date, OrderStatus.PENDING, new Money("EUR", 10, 500_000_000), 0, T, T, LINES,
        LINES.size(), Optional.empty(), Optional.of(new PendingStep(StockStep.PLACE, due)));
  }

  private static Order pending(String customerId) {
    return pending(id("O"), customerId, DAY, T.plusSeconds(30));
  }

  /** The request that placed {@code order}, naming its id (so its fingerprint is the order's own). */
  private static PlaceOrderCommand command(Order order, String requestId) {
    return new PlaceOrderCommand(order.customerId(), Optional.of(order.orderId()), Optional.of(order.orderDate()),
        order.lines(), order.total(), requestId);
  }

  private static Order placed(Order pending) {
    return pending.movedTo(OrderStatus.PLACED, T.plusSeconds(1), Optional.empty());
  }

  /** What the customer's copy holds of {@code order}: no lines, no shortages, no step (A5 lists summaries). */
  private static Order summary(Order order) {
    return new Order(order.orderId(), order.customerId(), order.orderDate(), order.status(), order.total(), order.version(),
        order.createTime(), order.updateTime(), List.of(), order.lineCount(),
        order.rejection().map(r -> new Rejection(r.reason(), List.of())), Optional.empty());
  }

  /** {@code order} as if read at {@code version}, owing {@code step}. */
  private static Order at(Order order, long version, PendingStep step) {
    return new Order(order.orderId(), order.customerId(), order.orderDate(), order.status(), order.total(), version,
        order.createTime(), order.updateTime(), order.lines(), order.lineCount(), order.rejection(), Optional.of(step));
  }

  private Order create(Order order) {
    return await(repository().create(order, command(order, id("R")), T));
  }

  private Optional<Order> find(String orderId) {
    return await(repository().find(orderId, true));
  }

  /** The customer's orders, read strongly, in one page. */
  private List<Order> customerOrders(String customerId) {
    return customerPage(customerId, new DateFilter.All(), 100, "").items();
  }

  private Page<Order> customerPage(String customerId, DateFilter filter, int pageSize, String token) {
    return await(repository().listByCustomer(customerId, new OrderPageQuery(filter, pageSize, token, true)));
  }

  private List<String> ids(List<Order> orders) {
    return orders.stream().map(Order::orderId).toList();
  }

  /** Every page of the stalled orders due by {@code now}. */
  private List<Order> stalled(Instant now) {
    List<Order> all = new ArrayList<>();
    String token = "";
    do {
      Page<Order> page = await(repository().listStalled(now, 100, token));
      all.addAll(page.items());
      token = page.nextPageToken();
    } while (!token.isEmpty());
    return all;
  }

  private Throwable failure(CompletableFuture<?> call) {
    try {
      await(call);
    } catch (RuntimeException e) {
      return Failures.cause(e);
    }
    throw new AssertionError("the call should have failed");
  }

  /** Of two writes from one read, exactly one wins and the other is stale; the winner's order. */
  private Order oneWins(CompletableFuture<Order> a, CompletableFuture<Order> b) {
    List<Order> won = new ArrayList<>();
    List<Throwable> lost = new ArrayList<>();
    for (CompletableFuture<Order> call : List.of(a, b)) {
      try {
        won.add(await(call));
      } catch (RuntimeException e) {
        lost.add(Failures.cause(e));
      }
    }
    assertThat(won).hasSize(1);
    assertThat(lost).singleElement().isInstanceOf(StaleOrderException.class);
    return won.get(0);
  }

  @Test
  void aCreate_storesBothCopies_owingItsPlaceStep_andReadsSeeIt() {
    String customer = id("C");
    Order order = pending(customer);
    assertThat(create(order)).isEqualTo(order);
    assertThat(find(order.orderId())).contains(order);
    assertThat(customerOrders(customer)).containsExactly(summary(order));
    // Eventually consistent reads may lag behind the write, never stay behind it.
    assertThat(Eventually.await(() -> await(repository().find(order.orderId(), false)), Optional::isPresent)).contains(order);
    assertThat(Eventually.await(() -> await(repository().listByCustomer(customer,
        new OrderPageQuery(new DateFilter.All(), 10, "", false))).items(), items -> !items.isEmpty()))
        .containsExactly(summary(order));
  }

  @Test
  void aReplayOfTheRequest_answersTheOrderAsItIsNow_andWritesNoOther() {
    String customer = id("C");
    Order first = pending(customer);
    // No order id in the request: each try of it makes up another, as the service does.
    PlaceOrderCommand request = new PlaceOrderCommand(customer, Optional.empty(), Optional.empty(), LINES, first.total(),
        id("R"));
    await(repository().create(first, request, T));
    Order placed = await(repository().finishPlacing(first, placed(first)));
    Order retry = pending(customer);
    assertThat(await(repository().create(retry, request, T.plusSeconds(5)))).isEqualTo(placed);
    assertThat(find(retry.orderId())).isEmpty();
    assertThat(customerOrders(customer)).containsExactly(summary(placed));
  }

  @Test
  void aRequestIdReusedForAnotherOrder_isRefused_andWritesNothing_butIsTheCustomersOwn() {
    String customer = id("C");
    String requestId = id("R");
    Order first = pending(customer);
    await(repository().create(first, command(first, requestId), T));
    Order other = pending(customer);
    assertThat(failure(repository().create(other, command(other, requestId), T)))
        .isInstanceOfSatisfying(AlreadyExistsException.class, e -> assertThat(e.reason()).isEqualTo("REQUEST_ID_REUSED"));
    assertThat(find(other.orderId())).isEmpty();
    assertThat(customerOrders(customer)).containsExactly(summary(first));
    // Request ids are per customer: another customer's same id places its own order.
    Order elsewhere = pending(id("C"));
    assertThat(await(repository().create(elsewhere, command(elsewhere, requestId), T))).isEqualTo(elsewhere);
  }

  @Test
  void aSecondOrderOfAnId_isRefused_andNoneOfItsItemsIsWritten() {
    String customer = id("C");
    Order first = pending(customer);
    create(first);
    // Same id, another customer and date: its customer copy's key is free, the direct copy's is not.
    String otherCustomer = id("C");
    Order again = pending(first.orderId(), otherCustomer, DAY.plusDays(1), T.plusSeconds(30));
    String requestId = id("R");
    assertThat(failure(repository().create(again, command(again, requestId), T)))
        .isInstanceOfSatisfying(AlreadyExistsException.class, e -> {
          assertThat(e.reason()).isEqualTo("ORDER_ALREADY_EXISTS");
          assertThat(e.metadata()).containsEntry("order_id", first.orderId());
        });
    assertThat(find(first.orderId())).contains(first);
    assertThat(customerOrders(otherCustomer)).isEmpty();
    assertThat(customerOrders(customer)).containsExactly(summary(first));
    // Nor its request record: its retry is refused again (not a replay), and its id is free for another order.
    assertThat(failure(repository().create(again, command(again, requestId), T)))
        .isInstanceOfSatisfying(AlreadyExistsException.class, e -> assertThat(e.reason()).isEqualTo("ORDER_ALREADY_EXISTS"));
    Order fresh = pending(otherCustomer);
    assertThat(await(repository().create(fresh, command(fresh, requestId), T))).isEqualTo(fresh);
  }

  @Test
  void finishingAPlacing_movesBothCopies_andDropsThePlaceStep_keepingARejectionsShortagesOnTheDirectCopy() {
    String customer = id("C");
    Order toPlace = create(pending(customer));
    Order toReject = create(pending(id("O"), customer, DAY.minusDays(1), T.plusSeconds(30)));
    Order placed = placed(toPlace);
    Order rejected = toReject.rejected(new Rejection(Rejection.OUT_OF_STOCK, List.of(new Shortage("P-1", "W1", 2, 1))),
        T.plusSeconds(2));
    assertThat(await(repository().finishPlacing(toPlace, placed))).isEqualTo(placed);
    assertThat(await(repository().finishPlacing(toReject, rejected))).isEqualTo(rejected);
    assertThat(find(placed.orderId())).contains(placed);
    assertThat(find(rejected.orderId())).contains(rejected);
    assertThat(customerOrders(customer)).containsExactly(summary(placed), summary(rejected));
  }

  @Test
  void twoFinishesFromOneRead_oneWins_andOnlyItIsStored() {
    String customer = id("C");
    Order order = create(pending(customer));
    Order winner = oneWins(repository().finishPlacing(order, placed(order)),
        repository().finishPlacing(order, order.rejected(new Rejection(Rejection.ABANDONED, List.of()), T.plusSeconds(1))));
    assertThat(find(order.orderId())).contains(winner);
    assertThat(customerOrders(customer)).containsExactly(summary(winner));
  }

  @Test
  void twoStatusChangesFromOneRead_oneWins_andOnlyItIsStored_withTheStepItOwes() {
    String customer = id("C");
    Order order = create(pending(customer));
    Order placed = await(repository().finishPlacing(order, placed(order)));
    Order paid = placed.movedTo(OrderStatus.PAID, T.plusSeconds(2), Optional.empty());
    Order cancelled = placed.movedTo(OrderStatus.CANCELLED, T.plusSeconds(2),
        Optional.of(new PendingStep(StockStep.RELEASE, T.plusSeconds(60))));
    Order winner = oneWins(repository().changeStatus(placed, paid), repository().changeStatus(placed, cancelled));
    assertThat(find(order.orderId())).contains(winner);
    assertThat(customerOrders(customer)).containsExactly(summary(winner));
    // A change from the read before the winner's is stale too.
    assertThat(failure(repository().changeStatus(placed, placed.movedTo(OrderStatus.CANCELLED, T.plusSeconds(3),
        Optional.empty())))).isInstanceOf(StaleOrderException.class);
    assertThat(find(order.orderId())).contains(winner);
  }

  @Test
  void aStatusChange_setsCarriesAndRemovesTheStepAsTheNewOrderOwes() {
    Order order = create(pending(id("C")));
    Order placed = await(repository().finishPlacing(order, placed(order)));
    PendingStep commit = new PendingStep(StockStep.COMMIT, T.plusSeconds(90));
    Order shipped = await(repository().changeStatus(placed, placed.movedTo(OrderStatus.SHIPPED, T.plusSeconds(2),
        Optional.of(commit))));
    assertThat(find(order.orderId())).get().extracting(Order::pending).isEqualTo(Optional.of(commit));
    Order delivered = await(repository().changeStatus(shipped, shipped.movedTo(OrderStatus.DELIVERED, T.plusSeconds(3),
        shipped.pending())));
    assertThat(find(order.orderId())).contains(delivered);
    Order settled = await(repository().changeStatus(delivered, delivered.movedTo(OrderStatus.DELIVERED, T.plusSeconds(4),
        Optional.empty())));
    assertThat(find(order.orderId())).contains(settled).get().extracting(Order::pending).isEqualTo(Optional.empty());
  }

  @Test
  void aChange_writesStatusVersionTimesRejectionAndStep_andLeavesWhatTheOrderWasCreatedWith() {
    Order order = create(pending(id("C")));
    Order placed = placed(order);
    // What a change carries besides those is not written: the copies keep their lines, total and creation.
    Order claims = new Order(placed.orderId(), placed.customerId(), placed.orderDate(), placed.status(),
        new Money("EUR", 1, 0), placed.version(), T.plusSeconds(9), placed.updateTime(), List.of(), 0, Optional.empty(),
        Optional.empty());
    await(repository().finishPlacing(order, claims));
    assertThat(find(order.orderId())).contains(placed);
    assertThat(customerOrders(order.customerId())).containsExactly(summary(placed));
  }

  @Test
  void aStepIsDone_onlyWhereItIsOwedAtThatVersion_andOnlyOnce() {
    Order order = create(pending(id("C")));
    Order placed = await(repository().finishPlacing(order, placed(order)));
    Order cancelled = await(repository().changeStatus(placed, placed.movedTo(OrderStatus.CANCELLED, T.plusSeconds(2),
        Optional.of(new PendingStep(StockStep.RELEASE, T.plusSeconds(60))))));
    Order otherStep = at(cancelled, cancelled.version(), new PendingStep(StockStep.COMMIT, T.plusSeconds(60)));
    Order earlier = at(cancelled, placed.version(), cancelled.pending().orElseThrow());
    assertThat(await(repository().stepDone(otherStep))).isFalse();
    assertThat(await(repository().stepDone(earlier))).isFalse();
    assertThat(find(order.orderId())).contains(cancelled);
    assertThat(await(repository().stepDone(cancelled))).isTrue();
    // Only the step goes: status, version and times stay, and the customer's copy is not touched.
    assertThat(find(order.orderId())).contains(cancelled.stepDone());
    assertThat(customerOrders(order.customerId())).containsExactly(summary(cancelled));
    assertThat(await(repository().stepDone(cancelled))).isFalse();
    assertThat(find(order.orderId())).contains(cancelled.stepDone());
  }

  @Test
  void aWriteToAnOrderNotStored_isBrokenData_notARace_andCreatesNothing() {
    Order ghost = pending(id("C"));
    assertThat(failure(repository().finishPlacing(ghost, placed(ghost)))).isInstanceOf(IllegalStateException.class);
    Order placedGhost = placed(ghost);
    assertThat(failure(repository().changeStatus(placedGhost, placedGhost.movedTo(OrderStatus.PAID, T.plusSeconds(2),
        Optional.empty())))).isInstanceOf(IllegalStateException.class);
    assertThat(await(repository().stepDone(ghost))).isFalse();
    assertThat(find(ghost.orderId())).isEmpty();
    assertThat(customerOrders(ghost.customerId())).isEmpty();
  }

  @Test
  void aTransactionCancelledByAConflict_isAborted_andChangesNothing() {
    Order order = create(pending(id("C")));
    Order other = pending(order.customerId());
    everyTransactionConflicts(true);
    try {
      assertThat(failure(repository().create(other, command(other, id("R")), T)))
          .isInstanceOfSatisfying(AbortedException.class, e -> assertThat(e.reason()).isEqualTo("TRANSACTION_CONFLICT"));
      assertThat(failure(repository().finishPlacing(order, placed(order))))
          .isInstanceOfSatisfying(AbortedException.class, e -> assertThat(e.reason()).isEqualTo("TRANSACTION_CONFLICT"));
    } finally {
      everyTransactionConflicts(false);
    }
    assertThat(find(other.orderId())).isEmpty();
    assertThat(find(order.orderId())).contains(order);
    assertThat(customerOrders(order.customerId())).containsExactly(summary(order));
    // The version did not move, so the write goes through once the conflicts stop.
    assertThat(await(repository().finishPlacing(order, placed(order)))).isEqualTo(placed(order));
  }

  @Test
  void aCustomersOrders_newestFirst_asSummaries_filteredByDate() {
    String customer = id("C");
    String prefix = id("O");
    Order june30 = create(pending(prefix + "-1", customer, LocalDate.parse("2026-06-30"), T.plusSeconds(30)));
    Order july1a = create(pending(prefix + "-2", customer, LocalDate.parse("2026-07-01"), T.plusSeconds(30)));
    Order july1b = create(pending(prefix + "-3", customer, LocalDate.parse("2026-07-01"), T.plusSeconds(30)));
    Order july31 = create(pending(prefix + "-4", customer, LocalDate.parse("2026-07-31"), T.plusSeconds(30)));
    Order august1 = create(pending(prefix + "-5", customer, LocalDate.parse("2026-08-01"), T.plusSeconds(30)));
    create(pending(id("C")));
    // Newest date first; within a day, the greater id first (the sort key is date, then id).
    assertThat(customerOrders(customer)).containsExactly(summary(august1), summary(july31), summary(july1b),
        summary(july1a), summary(june30));
    assertThat(ids(customerPage(customer, new DateFilter.Prefix("2026-07"), 10, "").items()))
        .containsExactly(july31.orderId(), july1b.orderId(), july1a.orderId());
    assertThat(ids(customerPage(customer, new DateFilter.Prefix("2026-07-01"), 10, "").items()))
        .containsExactly(july1b.orderId(), july1a.orderId());
    // Ranges include both ends; either may be open.
    assertThat(ids(customerPage(customer, new DateFilter.Range(Optional.of(LocalDate.parse("2026-07-01")),
        Optional.of(LocalDate.parse("2026-07-31"))), 10, "").items()))
        .containsExactly(july31.orderId(), july1b.orderId(), july1a.orderId());
    assertThat(ids(customerPage(customer, new DateFilter.Range(Optional.empty(), Optional.of(LocalDate.parse("2026-07-01"))),
        10, "").items())).containsExactly(july1b.orderId(), july1a.orderId(), june30.orderId());
    assertThat(ids(customerPage(customer, new DateFilter.Range(Optional.of(LocalDate.parse("2026-07-31")), Optional.empty()),
        10, "").items())).containsExactly(august1.orderId(), july31.orderId());
  }

  @Test
  void aCustomersPages_holdThePageSize_endWithoutAnEmptyPage_andTheirTokensServeOnlyTheirQuery() {
    String customer = id("C");
    List<String> newestFirst = new ArrayList<>();
    for (int day = 1; day <= 5; day++) {
      newestFirst.add(0, create(pending(id("O"), customer, DAY.minusDays(10 - day), T.plusSeconds(30))).orderId());
    }
    Page<Order> first = customerPage(customer, new DateFilter.All(), 2, "");
    Page<Order> second = customerPage(customer, new DateFilter.All(), 2, first.nextPageToken());
    Page<Order> last = customerPage(customer, new DateFilter.All(), 2, second.nextPageToken());
    assertThat(ids(first.items())).isEqualTo(newestFirst.subList(0, 2));
    assertThat(ids(second.items())).isEqualTo(newestFirst.subList(2, 4));
    assertThat(ids(last.items())).isEqualTo(newestFirst.subList(4, 5));
    assertThat(List.of(first.nextPageToken(), second.nextPageToken())).doesNotContain("");
    assertThat(last.nextPageToken()).isEmpty();
    Page<Order> whole = customerPage(customer, new DateFilter.All(), 5, "");
    assertThat(ids(whole.items())).isEqualTo(newestFirst);
    assertThat(whole.nextPageToken()).as("exactly a page left: no empty page after it").isEmpty();
    // A token is bound to its query: another filter, another customer, the other listing, or none of ours.
    String token = first.nextPageToken();
    assertThat(failure(repository().listByCustomer(customer, new OrderPageQuery(new DateFilter.Prefix("2026"), 2, token, true))))
        .isInstanceOf(InvalidArgumentException.class);
    assertThat(failure(repository().listByCustomer(id("C"), new OrderPageQuery(new DateFilter.All(), 2, token, true))))
        .isInstanceOf(InvalidArgumentException.class);
    assertThat(failure(repository().listStalled(T, 2, token))).isInstanceOf(InvalidArgumentException.class);
    assertThat(failure(repository().listByCustomer(customer, new OrderPageQuery(new DateFilter.All(), 2, "bm90LWEtdG9rZW4", true))))
        .isInstanceOf(InvalidArgumentException.class);
  }

  @Test
  void stalledOrders_areListedMostOverdueFirst_onlyWhileTheyOweAStepDueByNow() {
    Instant era = LISTING_ERA;
    String customer = id("C");
    Order owesPlace = create(pending(id("O"), customer, DAY, era.plusSeconds(10)));
    Order placedOrder = create(pending(id("O"), customer, DAY, era.plusSeconds(20)));
    await(repository().finishPlacing(placedOrder, placed(placedOrder)));
    Order toCancel = create(pending(id("O"), customer, DAY, era.plusSeconds(5)));
    Order placedThenCancelled = await(repository().finishPlacing(toCancel, placed(toCancel)));
    Order cancelled = await(repository().changeStatus(placedThenCancelled, placedThenCancelled.movedTo(
        OrderStatus.CANCELLED, T.plusSeconds(2), Optional.of(new PendingStep(StockStep.RELEASE, era.plusSeconds(30))))));
    Order done = create(pending(id("O"), customer, DAY, era.plusSeconds(15)));
    assertThat(await(repository().stepDone(done))).isTrue();
    Order notYetDue = create(pending(id("O"), customer, DAY, era.plusSeconds(100)));
    List<String> ours = List.of(owesPlace.orderId(), placedOrder.orderId(), cancelled.orderId(), done.orderId(),
        notYetDue.orderId());
    // The index is eventually consistent: the listing may lag, never list what it should not once caught up.
    List<Order> listed = Eventually.await(() -> stalled(era.plusSeconds(60)).stream()
        .filter(o -> ours.contains(o.orderId())).toList(),
        orders -> ids(orders).equals(List.of(owesPlace.orderId(), cancelled.orderId())));
    // The direct copy, whole: what the recovery needs to make the step.
    assertThat(listed).containsExactly(owesPlace, cancelled);
    // The cancelled order is due when its new step is, not its old PLACE step.
    assertThat(ids(stalled(era.plusSeconds(29)))).contains(owesPlace.orderId()).doesNotContain(cancelled.orderId());
    assertThat(ids(stalled(era.plusSeconds(30)))).contains(cancelled.orderId());
  }

  @Test
  void stalledPages_holdThePageSize_andResumeAfterTheLastOrderListed_whateverWasDoneMeanwhile() {
    Instant era = PAGING_ERA;
    String customer = id("C");
    String prefix = id("O");
    List<Order> orders = new ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      // The last two are due at once: the order id breaks the tie.
      orders.add(create(pending(prefix + "-" + i, customer, DAY, era.plusSeconds(Math.min(i, 4)))));
    }
    List<String> all = ids(orders);
    Instant now = era.plusSeconds(10);
    Eventually.await(() -> ids(stalled(now)), all::equals);
    Page<Order> whole = await(repository().listStalled(now, 5, ""));
    assertThat(ids(whole.items())).isEqualTo(all);
    assertThat(whole.nextPageToken()).as("exactly a page left: no empty page after it").isEmpty();
    Page<Order> first = await(repository().listStalled(now, 2, ""));
    assertThat(ids(first.items())).isEqualTo(all.subList(0, 2));
    // The recovery makes the steps of a page before it asks for the next: they leave the index meanwhile.
    for (Order listed : first.items()) {
      assertThat(await(repository().stepDone(listed))).isTrue();
    }
    Page<Order> second = await(repository().listStalled(now, 2, first.nextPageToken()));
    assertThat(ids(second.items())).isEqualTo(all.subList(2, 4));
    Page<Order> last = await(repository().listStalled(now, 2, second.nextPageToken()));
    assertThat(ids(last.items())).isEqualTo(all.subList(4, 5));
    assertThat(last.nextPageToken()).isEmpty();
    assertThat(failure(repository().listByCustomer(customer, new OrderPageQuery(new DateFilter.All(), 2,
        first.nextPageToken(), true)))).isInstanceOf(InvalidArgumentException.class);
    assertThat(failure(repository().listStalled(now, 2, "bm90LWEtdG9rZW4"))).isInstanceOf(InvalidArgumentException.class);
    Eventually.await(() -> ids(stalled(now)), all.subList(2, 5)::equals);
  }
}
