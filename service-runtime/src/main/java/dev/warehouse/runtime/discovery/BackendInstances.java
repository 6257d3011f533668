package dev.warehouse.runtime.discovery;

import dev.warehouse.runtime.log.Events;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The current instances of one backend service: the one list that its balanced channels
 * ({@link InstancesNameResolverProvider}) and the admin endpoint both follow.
 *
 * <p>Every configured address is looked up at start, then every resolve period, and soon after a channel
 * loses a connection (grpc-java's round robin then asks its name resolver to {@code refresh}). grpc-java's
 * own {@code dns} resolver looks names up again only on such a request, never on a timer, so an instance
 * added while all others stay up would never be used: hence this one. Look-ups run on the given scheduler,
 * never on an I/O thread. A name that fails to resolve gives no instance (a headless Service with no ready
 * pod has no address); when no name gives any, the channels are told of the error and keep what they have.
 */
public final class BackendInstances implements AutoCloseable {

  /**
   * Least time between the start of two look-ups asked for by lost connections: an instance that keeps
   * failing makes its channels ask at every reconnect attempt, and those requests share one look-up.
   */
  public static final Duration MIN_REFRESH_SPACING = Duration.ofSeconds(1);

  private static final Logger log = LoggerFactory.getLogger(BackendInstances.class);

  private static final Comparator<InetSocketAddress> ORDER =
      Comparator.comparing((InetSocketAddress a) -> a.getAddress().getHostAddress())
          .thenComparingInt(InetSocketAddress::getPort);

  private final String service;
  private final List<BackendAddress> addresses;
  private final AddressLookup lookup;
  private final Duration period;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final List<Consumer<List<InetSocketAddress>>> listeners = new CopyOnWriteArrayList<>();
  private final AtomicBoolean refreshQueued = new AtomicBoolean();
  private final Object lock = new Object();
  private List<InetSocketAddress> current = List.of(); // guarded by lock
  private List<String> lastFailures = List.of(); // look-up thread only
  private volatile Instant lastLookup = Instant.MIN;
  private volatile ScheduledFuture<?> periodic;

  /**
   * @param service   the backend's name, as logs and the admin endpoint's answers carry it ("inventory-service")
   * @param period    how often every name is looked up again ({@code BACKEND_RESOLVE_SECONDS})
   * @param scheduler runs the look-ups (they block) on one thread; the caller owns it
   */
  public BackendInstances(String service, List<BackendAddress> addresses, AddressLookup lookup, Duration period,
      ScheduledExecutorService scheduler, Clock clock) {
    if (addresses.isEmpty()) {
      throw new IllegalArgumentException("no address for " + service);
    }
    this.service = service;
    this.addresses = List.copyOf(addresses);
    this.lookup = lookup;
    this.period = period;
    this.scheduler = scheduler;
    this.clock = clock;
  }

  /** Looks every name up now (so the first calls have instances), then every period. */
  public BackendInstances start() {
    resolveNow();
    periodic = scheduler.scheduleWithFixedDelay(this::resolveNow, period.toMillis(), period.toMillis(),
        TimeUnit.MILLISECONDS);
    return this;
  }

  public String service() {
    return service;
  }

  /** The instances found by the last look-up, in address order; empty when no name resolved. */
  public List<InetSocketAddress> current() {
    synchronized (lock) {
      return current;
    }
  }

  /**
   * Calls {@code listener} with the current instances now, then each time they change, on the look-up
   * thread, until the returned action is run. It must return quickly.
   */
  public Runnable subscribe(Consumer<List<InetSocketAddress>> listener) {
    // One lock for the first answer and the changes, so that no change falls between them.
    synchronized (lock) {
      listeners.add(listener);
      listener.accept(current);
    }
    return () -> listeners.remove(listener);
  }

  /**
   * Asks for a look-up soon (a connection was lost): now, or {@link #MIN_REFRESH_SPACING} after the last
   * one began; requests made in the meantime share it. Never blocks.
   */
  public void refresh() {
    if (!refreshQueued.compareAndSet(false, true)) {
      return;
    }
    Instant last = lastLookup;
    long waitMs = last.equals(Instant.MIN) ? 0
        : Math.max(0, Duration.between(clock.instant(), last.plus(MIN_REFRESH_SPACING)).toMillis());
    try {
      scheduler.schedule(() -> {
        refreshQueued.set(false);
        resolveNow();
      }, waitMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      refreshQueued.set(false); // the process is stopping: nothing left to resolve for
    }
  }

  /**
   * Looks every configured name up, and tells the listeners when the set of instances changed. Blocks on
   * the resolver; never throws, so the periodic task goes on after a failure.
   */
  void resolveNow() {
    lastLookup = clock.instant();
    Set<InetSocketAddress> found = new LinkedHashSet<>();
    List<String> failures = new ArrayList<>();
    for (BackendAddress address : addresses) {
      try {
        List<InetAddress> answer = lookup.lookup(address.host());
        if (answer.isEmpty()) {
          throw new UnknownHostException("no address");
        }
        for (InetAddress ip : address.everyAddress() ? answer : answer.subList(0, 1)) {
          found.add(new InetSocketAddress(ip, address.port()));
        }
      } catch (UnknownHostException | RuntimeException e) {
        failures.add(address + " (" + e + ")");
      }
    }
    if (!failures.equals(lastFailures)) {
      // Logged when it starts, changes or ends, not at every period it lasts.
      if (!failures.isEmpty()) {
        Events.warn(log, "backend_lookup_failed").addKeyValue("service", service)
            .addKeyValue("addresses", String.join(";", failures)).log();
      } else {
        Events.info(log, "backend_lookup_recovered").addKeyValue("service", service).log();
      }
      lastFailures = failures;
    }
    List<InetSocketAddress> instances = found.stream().sorted(ORDER).toList();
    synchronized (lock) {
      if (instances.equals(current)) {
        return;
      }
      List<InetSocketAddress> before = current;
      current = instances;
      Events.info(log, "backend_instances_changed").addKeyValue("service", service)
          .addKeyValue("instances", describe(instances))
          .addKeyValue("added", describe(instances.stream().filter(a -> !before.contains(a)).toList()))
          .addKeyValue("removed", describe(before.stream().filter(a -> !instances.contains(a)).toList())).log();
      for (Consumer<List<InetSocketAddress>> listener : listeners) {
        try {
          listener.accept(instances);
        } catch (RuntimeException e) {
          Events.warn(log, "backend_instances_listener_failed").addKeyValue("service", service).setCause(e).log();
        }
      }
    }
  }

  /** What the configuration asked for, for messages: {@code dns:///name:port,host:port}. */
  public String configured() {
    return String.join(",", addresses.stream().map(BackendAddress::toString).toList());
  }

  /** {@code ip:port}, an IPv6 address in brackets. */
  public static String format(InetSocketAddress address) {
    String ip = address.getAddress().getHostAddress();
    return (address.getAddress() instanceof Inet6Address ? "[" + ip + "]" : ip) + ":" + address.getPort();
  }

  private static String describe(List<InetSocketAddress> instances) {
    return instances.isEmpty() ? "none" : String.join(",", instances.stream().map(BackendInstances::format).toList());
  }

  /** Stops looking up; the scheduler is the caller's to shut down. */
  @Override
  public void close() {
    ScheduledFuture<?> task = periodic;
    if (task != null) {
      task.cancel(false);
    }
    listeners.clear();
  }
}
