package dev.warehouse.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.warehouse.inventory.domain.OutOfStockException;
import dev.warehouse.inventory.domain.ProductInventory;
import dev.warehouse.inventory.domain.Reservation;
import dev.warehouse.inventory.domain.Reservation.ReleaseCause;
import dev.warehouse.inventory.domain.Reservation.State;
import dev.warehouse.inventory.domain.ReservationChangedException;
import dev.warehouse.inventory.domain.ReservationLine;
import dev.warehouse.inventory.store.DynamoInventoryRepository;
import dev.warehouse.inventory.store.DynamoReservationRepository;
import dev.warehouse.inventory.store.InventoryItems;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.store.ReservationItems;
import dev.warehouse.inventory.store.StockBuckets;
import dev.warehouse.inventory.store.StockChanges;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.dynamo.DynamoClients;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.TableSetup;
import dev.warehouse.runtime.error.ClientFacingException;
import dev.warehouse.runtime.error.Failures;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Split stock's races explored, not picked: the real DynamoDB repositories (holds, confirms, commits,
 * releases, W10 raising and lowering the bucket count, the rebalance) run as actors, each its own
 * "process" (client, repositories, bucket knowledge, clock), against moto through a {@link StepProxy}
 * that lets one DynamoDB request through at a time, chosen by a seeded random schedule, and now and
 * then answers a conflict or applies a write and loses its answer. After every write the table itself is
 * checked: no unit made or lost, every bucket's reserved units exactly the takes of the live reservations,
 * none negative, buckets only where the record says, the low-stock marker exactly the sum's; and at the
 * end, an OUT_OF_STOCK only where the sum was short at some moment of that hold.
 *
 * <p>A failure names its seed and step. Replay: {@code -Dexplore.seed=N}; more: {@code -Dexplore.seeds=200}.
 * moto's conditions decide every write, so a schedule replays the same decisions; the clocks of the actors
 * tick per call and are alike, so equal timestamps from two "processes" happen as they can in production.
 */
@Tag("integration")
class SplitStockExplorationTest {

  /** Seeds ./test.sh explores (each a few seconds: every step is a real request to moto). */
  static final int DEFAULT_SEEDS = 6;
  private static final Instant T = Instant.parse("2026-12-07T09:00:00Z");
  private static final String WAREHOUSE = "W1";
  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final int MAX_STEPS = 1_000;

  private static StepProxy proxy;
  private static DynamoDbAsyncClient direct;
  private static ScheduledExecutorService scheduler;
  private static final Map<String, DynamoDbAsyncClient> clients = new HashMap<>();
  private static Level logLevel;

  @BeforeAll
  static void start() throws Exception {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    logLevel = root.getLevel();
    root.setLevel(Level.OFF); // failed conditions and retries, logged by the code under test: expected here
    proxy = new StepProxy(MotoServer.endpoint());
    direct = DynamoClients.create(TestServices.config("explorer", "unused"), List.of());
    scheduler = Executors.newSingleThreadScheduledExecutor();
  }

  @AfterAll
  static void stop() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(logLevel);
    clients.values().forEach(DynamoDbAsyncClient::close);
    direct.close();
    proxy.close();
    scheduler.shutdownNow();
  }

  /** An actor's client: through the proxy, naming the actor on every request. Kept across seeds. */
  private static DynamoDbAsyncClient client(String actor) {
    return clients.computeIfAbsent(actor, a -> DynamoClients.create(
        TestServices.config(a, "unused", proxy.endpoint(), PATIENCE), List.of(StepProxy.tagging(a))));
  }

  @Test
  void everySchedule_sellsEachUnitOnce_andKeepsTheBucketsTrue() throws Exception {
    String one = System.getProperty("explore.seed");
    Map<String, Long> explored = new TreeMap<>();
    if (one != null && !one.isBlank()) {
      new World(Long.parseLong(one.trim())).run(explored);
      return;
    }
    long from = Long.getLong("explore.from", 1);
    long seeds = Long.getLong("explore.seeds", DEFAULT_SEEDS);
    for (long seed = from; seed < from + seeds; seed++) {
      new World(seed).run(explored);
    }
    System.out.println("split stock exploration: " + seeds + " seeds from " + from + " explored " + explored);
    // Green only means something if the races happened: each of these, somewhere in the seeds.
    assertThat(explored).containsKeys("hold HELD", "hold OUT_OF_STOCK", "hold spanning buckets", "commit COMMITTED",
        "release RELEASED", "bucket count set", "rebalance ran", "TransactWriteItems CONFLICT",
        "TransactWriteItems ANSWER_LOST", "TransactGetItems APPLIED", "marker present");
  }

  /** A clock of one actor: its own time, a millisecond on per call it starts. */
  private static final class StepClock extends Clock {
    private long ticks;

    synchronized Instant tick() {
      return T.plusMillis(++ticks);
    }

    @Override
    public synchronized Instant instant() {
      return T.plusMillis(ticks);
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }

  /** One seed's product, actors and schedule. */
  private static final class World {
    final long seed;
    final Random random;
    final String table = TestServices.uniqueTableName();
    final String product;
    final long initial;
    final long reorderPoint;
    final Map<String, Long> counts = new TreeMap<>();
    /** Per hold in flight: the least available sum seen since it started. */
    final Map<String, Long> leastSeen = new HashMap<>();
    long availableNow;
    int steps;
    /** What each step let through, for the message of a failure. */
    final List<String> trace = new ArrayList<>();

    World(long seed) {
      this.seed = seed;
      this.random = new Random(seed);
      this.product = "P-" + seed;
      // Fewer units than the buyers want, and a reorder point that most of the race is near: holds that
      // find their bucket short, spans, OUT_OF_STOCK and the marker's moves all happen.
      this.initial = 4 + random.nextInt(6);
      this.reorderPoint = 2 + random.nextInt(4);
    }

    String where() {
      return "seed " + seed + ", step " + steps + " (replay: -Dexplore.seed=" + seed + ")";
    }

    synchronized void count(String event) {
      counts.merge(event, 1L, Long::sum);
    }

    /** One actor's repositories, as a process of its own would have them. */
    record Process(DynamoReservationRepository reservations, DynamoInventoryRepository inventories, StockBuckets buckets,
        StepClock clock) {}

    Process process(DynamoDbAsyncClient client, long chooserSeed) {
      SimpleMeterRegistry meters = new SimpleMeterRegistry();
      DynamoStore store = new DynamoStore(client, table, new DynamoCalls(scheduler, meters, PATIENCE),
          new PageTokenCodec(TestServices.PAGE_TOKEN_KEY), meters);
      StepClock clock = new StepClock();
      Random chooser = new Random(chooserSeed);
      // The rebalance runs as an actor of its own here, never in the background.
      StockBuckets buckets = new StockBuckets(store, new StockChanges(table, LowStockShards.DECLARED), clock,
          Duration.ofDays(1), chooser::nextInt);
      return new Process(new DynamoReservationRepository(store, LowStockShards.DECLARED, buckets),
          new DynamoInventoryRepository(store, LowStockShards.DECLARED, buckets), buckets, clock);
    }

    void run(Map<String, Long> explored) throws Exception {
      TableSetup.ensureTable(direct, table, Duration.ofMinutes(1));
      Process setup = process(direct, seed);
      setup.inventories().putInventory(new ProductInventory(product, WAREHOUSE, initial, reorderPoint, T)).join();
      setup.inventories().setBucketCount(product, WAREHOUSE, 2 + random.nextInt(3), T).join();
      check("after setup");

      List<Actor> actors = new ArrayList<>();
      int buyers = 3 + random.nextInt(3);
      for (int i = 0; i < buyers; i++) {
        actors.add(buyer("buyer-" + i, 1 + random.nextInt(4)));
      }
      actors.add(admin());
      actors.add(rebalancer());
      actors.forEach(a -> proxy.live(a.name));
      actors.forEach(Actor::next);

      while (true) {
        List<StepProxy.Parked> ready = proxy.parked(PATIENCE);
        if (ready.isEmpty()) {
          break;
        }
        assertThat(++steps).as("steps, %s", where()).isLessThan(MAX_STEPS);
        StepProxy.Parked request = ready.get(random.nextInt(ready.size()));
        int roll = random.nextInt(100);
        StepProxy.Outcome outcome = roll < 8 && request.conflictable() ? StepProxy.Outcome.CONFLICT
            : roll < 14 && request.writes() ? StepProxy.Outcome.ANSWER_LOST : StepProxy.Outcome.APPLIED;
        count(request.operation + " " + outcome);
        trace.add("step " + steps + ": " + request.actor + " " + request.operation + " " + outcome + " "
            + request.body.replaceAll("\"TableName\":\"[^\"]*\",?", ""));
        proxy.release(request, outcome);
        if (request.writes() && outcome != StepProxy.Outcome.CONFLICT) {
          try {
            check("after " + request.actor + "'s " + request.operation + " " + outcome);
          } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nthe schedule:\n" + String.join("\n", trace), e);
          }
        }
      }
      for (Actor actor : actors) {
        assertThat(actor.failure).as("%s's script, %s", actor.name, where()).isNull();
      }
      check("at the end");
      counts.forEach((event, n) -> explored.merge(event, n, Long::sum));
      direct.deleteTable(d -> d.tableName(table)).join();
    }

    // ------------------------------------------------------------------------------------------- actors

    /** A script of calls run one after another; each call's outcome picks what comes next. */
    final class Actor {
      final String name;
      final List<Supplier<CompletableFuture<?>>> script = new ArrayList<>();
      Throwable failure;

      Actor(String name) {
        this.name = name;
      }

      void then(Supplier<CompletableFuture<?>> call) {
        script.add(call);
      }

      void next() {
        if (script.isEmpty()) {
          proxy.done(name);
          return;
        }
        CompletableFuture<?> call;
        try {
          call = script.remove(0).get();
        } catch (RuntimeException | AssertionError e) {
          failure = e;
          proxy.done(name);
          return;
        }
        call.whenComplete((ok, e) -> {
          if (e != null && Failures.cause(e) instanceof AssertionError) {
            failure = Failures.cause(e);
            script.clear();
          }
          next();
        });
      }
    }

    /** Holds {@code units}, then commits (confirmed first) or releases; a call whose answer was lost is asked again. */
    Actor buyer(String name, long units) {
      Actor actor = new Actor(name);
      Process process = process(client(name), random.nextLong());
      boolean commits = random.nextBoolean();
      String order = "O-" + seed + "-" + name;
      Reservation[] held = new Reservation[1];
      for (int attempt = 0; attempt < 2; attempt++) {
        actor.then(() -> {
          if (held[0] != null) {
            return CompletableFuture.completedFuture(null);
          }
          Instant now = process.clock().tick();
          Reservation wanted = new Reservation(order, State.HELD, List.of(new ReservationLine(product, WAREHOUSE, units)),
              now.plusSeconds(60), Optional.empty(), now, now);
          startHold(order);
          return process.reservations().hold(wanted).handle((reservation, e) -> {
            long least = endHold(order);
            Throwable cause = e == null ? null : Failures.cause(e);
            if (cause instanceof ReservationChangedException changed && changed.found().isPresent()
                && changed.found().get().state() == State.HELD) {
              reservation = changed.found().get(); // our own hold, whose answer was lost
            }
            if (reservation != null) {
              held[0] = reservation;
              count("hold HELD");
              if (reservation.lines().get(0).takes().size() > 1) {
                count("hold spanning buckets");
              }
            } else if (cause instanceof OutOfStockException) {
              count("hold OUT_OF_STOCK");
              assertThat(least).as("%s's OUT_OF_STOCK for %d units: the least available sum while it ran, %s", name, units,
                  where()).isLessThan(units);
            } else {
              count("hold " + label(cause));
            }
            return null;
          });
        });
      }
      if (commits) {
        Reservation[] confirmed = new Reservation[1];
        for (int attempt = 0; attempt < 2; attempt++) {
          actor.then(() -> held[0] == null || confirmed[0] != null ? CompletableFuture.completedFuture(null)
              : process.reservations().confirm(order, process.clock().tick()).handle((c, e) -> {
                Throwable cause = e == null ? null : Failures.cause(e);
                if (cause instanceof ReservationChangedException changed && changed.found().isPresent()
                    && changed.found().get().state() == State.CONFIRMED) {
                  c = changed.found().get();
                }
                confirmed[0] = c;
                count("confirm " + (c != null ? "CONFIRMED" : label(cause)));
                return null;
              }));
        }
        ending(actor, process, confirmed, State.COMMITTED, "commit");
      } else {
        ending(actor, process, held, State.RELEASED, "release");
      }
      return actor;
    }

    private void ending(Actor actor, Process process, Reservation[] current, State to, String what) {
      boolean[] ended = new boolean[1];
      for (int attempt = 0; attempt < 2; attempt++) {
        actor.then(() -> {
          if (current[0] == null || ended[0]) {
            return CompletableFuture.completedFuture(null);
          }
          Reservation next = current[0].ended(to,
              to == State.RELEASED ? Optional.of(ReleaseCause.ORDER_REJECTED) : Optional.empty(), process.clock().tick());
          return process.reservations().end(current[0], next).handle((r, e) -> {
            Throwable cause = e == null ? null : Failures.cause(e);
            if (cause instanceof ReservationChangedException changed && changed.found().isPresent()
                && changed.found().get().state() == to) {
              r = changed.found().get();
            }
            ended[0] = r != null;
            count(what + " " + (r != null ? to.name() : label(cause)));
            return null;
          });
        });
      }
    }

    /** Sets the bucket count once or twice: up, down, or to one (every unit back to the record). */
    Actor admin() {
      Actor actor = new Actor("admin");
      Process process = process(client("admin"), random.nextLong());
      int changes = 1 + random.nextInt(2);
      for (int i = 0; i < changes; i++) {
        int count = new int[] {1, 2, 3, 4, 8}[random.nextInt(5)];
        actor.then(() -> process.inventories().setBucketCount(product, WAREHOUSE, count, process.clock().tick())
            .handle((ok, e) -> {
              count(e == null ? "bucket count set" : "bucket count " + label(Failures.cause(e)));
              return null;
            }));
      }
      return actor;
    }

    /** Rebalances twice (each up to its rounds: moves, then drops of drained buckets). */
    Actor rebalancer() {
      Actor actor = new Actor("rebalancer");
      Process process = process(client("rebalancer"), random.nextLong());
      for (int i = 0; i < 2; i++) {
        actor.then(() -> {
          process.clock().tick();
          return process.buckets().rebalance(product, WAREHOUSE, 1).handle((ok, e) -> {
            count(e == null ? "rebalance ran" : "rebalance " + label(Failures.cause(e)));
            return null;
          });
        });
      }
      return actor;
    }

    private static String label(Throwable cause) {
      return cause instanceof ClientFacingException client ? client.getClass().getSimpleName() + " " + client.reason()
          : cause == null ? "none" : cause.getClass().getSimpleName();
    }

    synchronized void startHold(String order) {
      leastSeen.put(order, availableNow);
    }

    synchronized long endHold(String order) {
      return leastSeen.remove(order);
    }

    // --------------------------------------------------------------------------------------- invariants

    /** The table as it is now, checked against what every write must keep true. */
    void check(String when) {
      String at = when + ", " + where();
      List<Map<String, AttributeValue>> items = direct.scan(s -> s.tableName(table).consistentRead(true)).join().items();
      Map<Integer, ProductInventory> buckets = new TreeMap<>();
      Optional<Map<String, AttributeValue>> record = Optional.empty();
      List<ProductInventory> markers = new ArrayList<>();
      List<Reservation> reservations = new ArrayList<>();
      for (Map<String, AttributeValue> item : items) {
        String entity = item.get("entity").s();
        if (entity.equals(InventoryItems.STOCK)) {
          record = Optional.of(item);
          buckets.put(0, InventoryItems.toProductInventory(item));
        } else if (entity.equals(InventoryItems.STOCK_BUCKET)) {
          buckets.put(Integer.parseInt(item.get("bucket").n()), InventoryItems.toProductInventory(item));
        } else if (entity.equals(InventoryItems.LOW_STOCK_MARKER)) {
          markers.add(InventoryItems.toProductInventory(item));
        } else if (entity.equals(ReservationItems.RESERVATION)) {
          reservations.add(ReservationItems.toReservation(item));
        }
      }
      assertThat(record).as("the stock record, %s", at).isPresent();
      int kept = Optional.ofNullable(record.get().get("buckets_kept")).map(v -> Integer.parseInt(v.n())).orElse(1);
      int count = buckets.get(0).bucketCount();
      assertThat(kept).as("buckets kept >= bucket count, %s", at).isGreaterThanOrEqualTo(count);
      assertThat(buckets.keySet()).as("buckets only below the kept count (%d), %s", kept, at).allMatch(b -> b < kept);

      Map<Integer, Long> taken = new HashMap<>();
      long committed = 0;
      for (Reservation r : reservations) {
        for (ReservationLine line : r.lines()) {
          if (r.state() == State.HELD || r.state() == State.CONFIRMED) {
            line.takesOrWhole().forEach(t -> taken.merge(t.bucket(), t.quantity(), Long::sum));
          } else if (r.state() == State.COMMITTED) {
            committed += line.quantity();
          }
        }
      }
      long quantity = 0;
      long reserved = 0;
      for (Map.Entry<Integer, ProductInventory> b : buckets.entrySet()) {
        ProductInventory bucket = b.getValue();
        assertThat(bucket.reserved()).as("bucket %d's reserved units, %s", b.getKey(), at).isBetween(0L, bucket.quantity());
        assertThat(bucket.reserved()).as("bucket %d's reserved units = the live reservations' takes there, %s", b.getKey(), at)
            .isEqualTo(taken.getOrDefault(b.getKey(), 0L));
        quantity += bucket.quantity();
        reserved += bucket.reserved();
      }
      assertThat(taken.keySet()).as("live reservations take only from buckets that exist, %s", at)
          .allMatch(buckets::containsKey);
      assertThat(quantity + committed).as("units on hand plus units sold = units stocked, %s", at).isEqualTo(initial);

      ProductInventory sum = new ProductInventory(product, WAREHOUSE, quantity, reorderPoint, T, reserved);
      if (sum.low()) {
        count("marker present");
        assertThat(markers).as("one low-stock marker while the sum is low, %s", at).hasSize(1);
        assertThat(markers.get(0).available()).as("the marker's available units, %s", at).isEqualTo(sum.available());
        assertThat(markers.get(0).quantity()).as("the marker's units on hand, %s", at).isEqualTo(sum.quantity());
      } else {
        assertThat(markers).as("no low-stock marker while the sum is clear (%d available), %s", sum.available(), at).isEmpty();
      }
      synchronized (this) {
        availableNow = sum.available();
        leastSeen.replaceAll((order, least) -> Math.min(least, availableNow));
      }
    }
  }
}
