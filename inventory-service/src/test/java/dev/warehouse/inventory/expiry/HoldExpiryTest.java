package dev.warehouse.inventory.expiry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.Reservation.ReleaseCause;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.domain.Reservations;
import dev.warehouse.inventory.store.DynamoReservationRepository;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.testing.Eventually;
import dev.warehouse.runtime.testing.StrictMoto;
import dev.warehouse.testing.TestClock;
import dev.warehouse.runtime.testing.TestServices;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The expiry loop, driven by an injected clock (no sleeps), on the strict moto with injected conflicts
 * and stale index reads: it releases the holds past their expiry, never a confirmed one, and racing a
 * caller's release it gives the units back once.
 */
@Tag("integration")
class HoldExpiryTest {

  private static final String TABLE = TestServices.uniqueTableName();
  private static DynamoDbAsyncClient dynamo;
  private static ScheduledExecutorService scheduler;
  private static SimpleMeterRegistry meters;
  private static DynamoReservationRepository repository;
  private static Reservations reservations;
  private static TestClock clock;
  private static HoldExpiry expiry;

  @BeforeAll
  static void start() {
    dynamo = TestServices.dynamo(TABLE);
    StrictMoto.table(TABLE).conflictRate(0.3).apply();
    scheduler = Executors.newSingleThreadScheduledExecutor();
    meters = new SimpleMeterRegistry();
    DynamoStore store = new DynamoStore(dynamo, TABLE, new DynamoCalls(scheduler, meters, Duration.ofSeconds(10)),
        new PageTokenCodec(TestServices.PAGE_TOKEN_KEY), meters);
    repository = new DynamoReservationRepository(store, LowStockShards.DECLARED);
    clock = new TestClock(Instant.parse("2026-12-04T05:00:00Z"));
    reservations = new Reservations(repository, clock, Duration.ofSeconds(60), meters);
    expiry = new HoldExpiry(reservations, clock, Duration.ofSeconds(10), scheduler, meters);
  }

  @AfterAll
  static void stop() {
    StrictMoto.reset(TABLE);
    scheduler.shutdownNow();
    dynamo.close();
  }

  private static String id(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static String stocked(long units) {
    String product = id("P");
    dynamo.putItem(p -> p.tableName(TABLE).item(InventoryItems.toItem(
        new ProductInventory(product, "W1", units, 0, clock.instant())))).join();
    return product;
  }

  private static ProductInventory stock(String product) {
    return InventoryItems.toProductInventory(dynamo.getItem(g -> g.tableName(TABLE).consistentRead(true)
        .key(dev.warehouse.inventory.store.InventoryKeys.stock(product, "W1").attributes())).join().item());
  }

  private static Reservation hold(String order, String product, long units, Duration holdFor) {
    return reservations.reserve(order, List.of(new ReservationLine(product, "W1", units)), Optional.of(holdFor)).join();
  }

  private static State stateOf(String order) {
    return repository.find(order, true).join().orElseThrow().state();
  }

  /** Sweeps until {@code done} holds: the index (A9) is eventually consistent, so one sweep may miss a hold. */
  private static void sweepUntil(java.util.function.BooleanSupplier done) {
    Eventually.await(() -> {
      expiry.sweep().join();
      return done.getAsBoolean();
    }, ok -> ok);
  }

  @Test
  void aHoldPastItsExpiry_isReleased_andAConfirmedOne_isNot() {
    String product = stocked(10);
    String abandoned = id("o");
    String confirmed = id("o");
    String fresh = id("o");
    hold(abandoned, product, 2, Duration.ofSeconds(60));
    hold(confirmed, product, 3, Duration.ofSeconds(60));
    hold(fresh, product, 1, Duration.ofSeconds(600));
    reservations.confirm(confirmed).join();
    clock.advance(Duration.ofSeconds(61));

    sweepUntil(() -> stateOf(abandoned) == State.RELEASED);
    Reservation released = repository.find(abandoned, true).join().orElseThrow();
    assertThat(released.releaseCause()).contains(ReleaseCause.HOLD_EXPIRED);
    assertThat(stateOf(confirmed)).isEqualTo(State.CONFIRMED);
    assertThat(stateOf(fresh)).isEqualTo(State.HELD);
    ProductInventory after = stock(product);
    assertThat(after.reserved()).isEqualTo(4);
    assertThat(after.available()).isEqualTo(6);
    assertThat(meters.get("reservation.holds.expired").counter().count()).isGreaterThanOrEqualTo(1);
  }

  @Test
  void aReleaseRacingTheExpiryLoop_givesTheUnitsBackOnce() {
    String product = stocked(20);
    List<String> orders = List.of(id("x"), id("x"), id("x"), id("x"));
    orders.forEach(o -> hold(o, product, 5, Duration.ofSeconds(30)));
    assertThat(stock(product).available()).isZero();
    clock.advance(Duration.ofSeconds(31));
    // The sweeps and callers' releases of the same holds, all at once.
    List<CompletableFuture<?>> racing = new java.util.ArrayList<>();
    racing.add(expiry.sweep());
    orders.forEach(o -> racing.add(reservations.release(o, ReleaseCause.ORDER_REJECTED)));
    orders.forEach(o -> racing.add(reservations.expire(o, clock.instant())));
    CompletableFuture.allOf(racing.toArray(CompletableFuture[]::new)).join();
    sweepUntil(() -> orders.stream().allMatch(o -> stateOf(o) == State.RELEASED));
    ProductInventory after = stock(product);
    assertThat(after.reserved()).isZero();
    assertThat(after.available()).isEqualTo(20);
    assertThat(after.quantity()).isEqualTo(20);
  }

  @Test
  void aConfirmRacingTheExpiryLoop_isEitherConfirmedOrReleased_neverBoth() {
    String product = stocked(10);
    String order = id("race");
    hold(order, product, 4, Duration.ofSeconds(5));
    clock.advance(Duration.ofSeconds(6));
    CompletableFuture<Reservation> confirm = reservations.confirm(order);
    CompletableFuture<Boolean> release = reservations.expire(order, clock.instant());
    CompletableFuture.allOf(confirm.exceptionally(e -> null), release).join();
    State state = stateOf(order);
    ProductInventory after = stock(product);
    if (state == State.CONFIRMED) {
      assertThat(after.reserved()).isEqualTo(4);
    } else {
      assertThat(state).isEqualTo(State.RELEASED);
      assertThat(after.reserved()).isZero();
    }
    assertThat(after.available() + after.reserved()).isEqualTo(10);
  }

  @Test
  void expiredHolds_arePagedOldestFirst_acrossTheShards_ofTheIndex() {
    String product = stocked(100);
    List<String> orders = new java.util.ArrayList<>();
    for (int i = 0; i < 7; i++) {
      String order = id("page");
      orders.add(order);
      hold(order, product, 1, Duration.ofSeconds(100 + i)); // expiring one second apart, in this order
    }
    Instant later = clock.instant().plus(Duration.ofSeconds(200));
    List<Reservation> listed = Eventually.await(() -> {
      List<Reservation> all = new java.util.ArrayList<>();
      String token = "";
      do {
        dev.warehouse.runtime.paging.Page<Reservation> page =
            reservations.listExpiredHolds(new dev.warehouse.inventory.domain.PageQuery(2, token, false), later).join();
        assertThat(page.items()).hasSizeLessThanOrEqualTo(2);
        all.addAll(page.items());
        token = page.nextPageToken();
      } while (!token.isEmpty());
      return all.stream().filter(r -> orders.contains(r.orderId())).toList();
    }, all -> all.size() == orders.size());
    assertThat(listed).extracting(Reservation::orderId).containsExactlyElementsOf(orders);
    // Not yet expired at the time asked about: not listed.
    assertThat(reservations.listExpiredHolds(new dev.warehouse.inventory.domain.PageQuery(100, "", false),
        clock.instant().plus(Duration.ofSeconds(50))).join().items()).noneMatch(r -> orders.contains(r.orderId()));
  }
}
