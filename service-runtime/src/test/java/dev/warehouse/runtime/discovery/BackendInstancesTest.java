package dev.warehouse.runtime.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.testing.TestClock;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The list of a backend's instances: what each form of address gives, when listeners hear of a change, what a
 * failed look-up does, and how the look-ups that lost connections ask for are spaced and shared.
 */
class BackendInstancesTest {

  /** Names and their answers, which the tests change as DNS would. */
  private final Map<String, List<InetAddress>> answers = new ConcurrentHashMap<>();
  private final AtomicInteger lookups = new AtomicInteger();
  private final AddressLookup lookup = host -> {
    lookups.incrementAndGet();
    List<InetAddress> answer = answers.get(host);
    if (answer == null) {
      throw new UnknownHostException(host + ": Name or service not known");
    }
    return answer;
  };
  private final TestClock clock = new TestClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final RecordingScheduler scheduler = new RecordingScheduler();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private BackendInstances instances(String... addresses) {
    return new BackendInstances("order-service", BackendAddress.parseAll(List.of(addresses)), lookup,
        Duration.ofHours(1), scheduler, clock);
  }

  private static InetAddress ip(String address) throws UnknownHostException {
    return InetAddress.getByName(address); // literals only: no look-up
  }

  private static InetSocketAddress at(String address, int port) throws UnknownHostException {
    return new InetSocketAddress(ip(address), port);
  }

  @Test
  void dnsTarget_givesEveryAddress_hostPort_onlyTheFirst_inAddressOrder() throws Exception {
    answers.put("headless", List.of(ip("10.0.0.3"), ip("10.0.0.1"), ip("10.0.0.2")));
    answers.put("single", List.of(ip("10.0.1.9"), ip("10.0.1.8")));
    answers.put("10.0.0.1", List.of(ip("10.0.0.1"))); // what the JVM answers for a literal

    BackendInstances instances = instances("dns:///headless:50053", "single:50053", "10.0.0.1:50053").start();

    assertThat(instances.current()).containsExactly(at("10.0.0.1", 50053), at("10.0.0.2", 50053),
        at("10.0.0.3", 50053), at("10.0.1.9", 50053));
  }

  @Test
  void listeners_hearTheCurrentInstances_thenEachChange_butNotAnAnswerInAnotherOrder() throws Exception {
    answers.put("headless", List.of(ip("10.0.0.1"), ip("10.0.0.2")));
    BackendInstances instances = instances("dns:///headless:50053").start();
    List<List<InetSocketAddress>> heard = new CopyOnWriteArrayList<>();
    Runnable unsubscribe = instances.subscribe(heard::add);

    answers.put("headless", List.of(ip("10.0.0.2"), ip("10.0.0.1"))); // a DNS server rotating its answer
    instances.resolveNow();
    answers.put("headless", List.of(ip("10.0.0.2"), ip("10.0.0.3")));
    instances.resolveNow();
    unsubscribe.run();
    answers.put("headless", List.of(ip("10.0.0.4")));
    instances.resolveNow();

    assertThat(heard).containsExactly(
        List.of(at("10.0.0.1", 50053), at("10.0.0.2", 50053)),
        List.of(at("10.0.0.2", 50053), at("10.0.0.3", 50053)));
    assertThat(instances.current()).containsExactly(at("10.0.0.4", 50053));
  }

  @Test
  void aNameThatFailsToResolve_givesNoInstance_andTheOthersStay() throws Exception {
    answers.put("inventory", List.of(ip("10.0.0.1")));
    answers.put("headless", List.of(ip("10.0.0.2")));
    BackendInstances instances = instances("dns:///headless:50052", "inventory:50052").start();
    List<List<InetSocketAddress>> heard = new CopyOnWriteArrayList<>();
    instances.subscribe(heard::add);

    answers.remove("headless"); // no ready pod: the headless name has no address
    instances.resolveNow();
    answers.remove("inventory");
    instances.resolveNow();
    answers.put("headless", List.of(ip("10.0.0.5")));
    instances.resolveNow();

    assertThat(heard).containsExactly(
        List.of(at("10.0.0.1", 50052), at("10.0.0.2", 50052)),
        List.of(at("10.0.0.1", 50052)),
        List.of(),
        List.of(at("10.0.0.5", 50052)));
  }

  @Test
  void aLookupThatThrows_doesNotStopThePeriodicLookups() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    BackendInstances instances = new BackendInstances("order-service",
        BackendAddress.parseAll(List.of("dns:///headless:50053")), host -> {
          if (calls.incrementAndGet() == 2) {
            throw new IllegalStateException("resolver broke");
          }
          return List.of(ip("10.0.0." + Math.min(calls.get(), 9)));
        }, Duration.ofMillis(20), scheduler, clock).start();
    CountDownLatch recovered = new CountDownLatch(1);
    instances.subscribe(found -> {
      if (calls.get() >= 3 && !found.isEmpty()) {
        recovered.countDown();
      }
    });

    assertThat(recovered.await(10, TimeUnit.SECONDS)).as("instances found by a look-up after the one that threw")
        .isTrue();
  }

  @Test
  void refresh_rightAfterALookup_waitsTheMinimumSpacing_andLater_runsAtOnce() throws Exception {
    answers.put("headless", List.of(ip("10.0.0.1")));
    BackendInstances instances = instances("dns:///headless:50053").start();

    instances.refresh();
    assertThat(scheduler.delaysMs).containsExactly(BackendInstances.MIN_REFRESH_SPACING.toMillis());

    scheduler.awaitIdle();
    clock.advance(BackendInstances.MIN_REFRESH_SPACING);
    instances.refresh();
    assertThat(scheduler.delaysMs).containsExactly(BackendInstances.MIN_REFRESH_SPACING.toMillis(), 0L);
  }

  @Test
  void refreshes_askedWhileALookupIsUnderWay_shareOneLookupAfterIt() throws Exception {
    answers.put("headless", List.of(ip("10.0.0.1")));
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger count = new AtomicInteger();
    BackendInstances instances = new BackendInstances("order-service",
        BackendAddress.parseAll(List.of("dns:///headless:50053")), host -> {
          if (count.incrementAndGet() == 2) { // the first refresh's look-up: held until the others are asked
            entered.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return answers.get(host);
        }, Duration.ofHours(1), scheduler, clock).start();
    clock.advance(BackendInstances.MIN_REFRESH_SPACING);

    instances.refresh();
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    for (int i = 0; i < 10; i++) {
      instances.refresh();
    }
    release.countDown();
    scheduler.awaitIdle();

    assertThat(count.get()).as("start, the held refresh, then one for the ten asked meanwhile").isEqualTo(3);
  }



  /** A real one-thread scheduler that records the delay of each one-off task. */
  private static final class RecordingScheduler extends ScheduledThreadPoolExecutor {
    final List<Long> delaysMs = new CopyOnWriteArrayList<>();

    RecordingScheduler() {
      super(1);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      delaysMs.add(unit.toMillis(delay));
      return super.schedule(command, delay, unit);
    }

    /** Waits until every one-off task scheduled so far has run. */
    void awaitIdle() throws Exception {
      super.schedule(() -> { }, 0, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
      // A task due later (the spaced refresh) is still queued: wait for it too.
      while (getQueue().stream().anyMatch(task -> !((ScheduledFuture<?>) task).isDone()
          && ((ScheduledFuture<?>) task).getDelay(TimeUnit.MILLISECONDS) < Duration.ofMinutes(1).toMillis())) {
        super.schedule(() -> { }, 10, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
      }
    }
  }
}
