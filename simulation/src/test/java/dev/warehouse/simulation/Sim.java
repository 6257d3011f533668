package dev.warehouse.simulation;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;

/**
 * The simulation's scheduler: one thread, simulated time, and a seeded {@link Random} that picks which
 * ready task runs next. Every task belongs to a node (a process, the database or the clients): a crash
 * drops a node's tasks, a freeze holds them back, and each node reads its own, possibly skewed, clock.
 * The code under test completes its futures inside tasks, so its continuations run there too, and every
 * I/O it starts is a new task: the seed alone decides the interleaving, and replays it exactly.
 */
final class Sim {

  /** Where every node's clock starts. */
  static final Instant EPOCH = Instant.parse("2026-12-05T09:00:00Z");
  /** The nodes that never crash or freeze. */
  static final String DATABASE = "dynamodb";
  static final String CLIENTS = "clients";

  private record Task(long seq, String node, String what, Runnable body) {}

  private record Timer(long at, long seq, Task task) {}

  final Random random;
  private final List<Task> ready = new ArrayList<>();
  private final PriorityQueue<Timer> timers = new PriorityQueue<>((a, b) ->
      a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
  private final Map<String, Long> skewMillis = new HashMap<>();
  private final Map<String, Long> frozenUntil = new HashMap<>();
  private final Map<String, Integer> generation = new HashMap<>();
  private final List<String> trace = new ArrayList<>();
  private final Map<String, Long> counts = new java.util.TreeMap<>();
  private long now;
  private long seq;
  private long steps;
  private String current = CLIENTS;

  Sim(long seed) {
    this.random = new Random(seed);
  }

  long now() {
    return now;
  }

  long steps() {
    return steps;
  }

  /** The node whose task is running: the owner of any I/O started now. */
  String current() {
    return current;
  }

  /** {@code node}'s clock: the simulated time plus its skew. */
  Clock clock(String node) {
    return new Clock() {
      @Override
      public Instant instant() {
        return EPOCH.plusMillis(now + skewMillis.getOrDefault(node, 0L));
      }

      @Override
      public java.time.ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(java.time.ZoneId zone) {
        throw new UnsupportedOperationException();
      }
    };
  }

  void skew(String node, long millis) {
    skewMillis.put(node, millis);
  }

  /** Runs {@code body} on {@code node} as soon as the scheduler picks it. */
  void run(String node, String what, Runnable body) {
    ready.add(new Task(seq++, node, what, tagged(node, body)));
  }

  /** Runs {@code body} on {@code node} once {@code delayMillis} have passed on the simulated clock. */
  void after(long delayMillis, String node, String what, Runnable body) {
    timers.add(new Timer(now + Math.max(0, delayMillis), seq++, new Task(seq++, node, what, tagged(node, body))));
  }

  /** A task of a node's current life: a crash of the node drops it, and a task of an earlier life never runs. */
  private Runnable tagged(String node, Runnable body) {
    int life = generation.getOrDefault(node, 0);
    return () -> {
      if (generation.getOrDefault(node, 0) == life) {
        body.run();
      }
    };
  }

  /** {@code node} crashes: its queued tasks and timers are dropped, and none of its current life runs again. */
  void crash(String node) {
    generation.merge(node, 1, Integer::sum);
    count("crash");
    note("crash " + node);
  }

  /** {@code node} runs nothing until {@code untilMillis}. */
  void freeze(String node, long untilMillis) {
    frozenUntil.put(node, untilMillis);
    count("freeze");
    note("freeze " + node + " until " + untilMillis);
  }

  boolean frozen(String node) {
    return frozenUntil.getOrDefault(node, -1L) > now;
  }

  /**
   * One step: time moves on by a few milliseconds (timers that fall due become ready), then one ready
   * task of a node not frozen runs, picked by the seed. Returns false when nothing is left to run before
   * {@code endMillis}.
   */
  boolean step(long endMillis) {
    now += random.nextInt(3);
    while (true) {
      promoteDue();
      List<Integer> eligible = new ArrayList<>();
      for (int i = 0; i < ready.size(); i++) {
        if (!frozen(ready.get(i).node)) {
          eligible.add(i);
        }
      }
      if (!eligible.isEmpty()) {
        Task task = ready.remove((int) eligible.get(random.nextInt(eligible.size())));
        steps++;
        current = task.node;
        try {
          task.body.run();
        } finally {
          current = CLIENTS;
        }
        return true;
      }
      long next = nextWake();
      if (next == Long.MAX_VALUE || next > endMillis) {
        now = Math.max(now, endMillis);
        return false;
      }
      now = Math.max(now, next);
    }
  }

  private void promoteDue() {
    while (!timers.isEmpty() && timers.peek().at <= now) {
      ready.add(timers.poll().task);
    }
  }

  /** When something can next run: the next timer, or the end of a freeze holding back a ready task. */
  private long nextWake() {
    long next = timers.isEmpty() ? Long.MAX_VALUE : timers.peek().at;
    for (Task task : ready) {
      next = Math.min(next, frozenUntil.getOrDefault(task.node, now));
    }
    return next;
  }

  /** Whether the seed says so, with probability {@code p}. */
  boolean chance(double p) {
    return random.nextDouble() < p;
  }

  <T> T pick(List<T> options) {
    return options.get(random.nextInt(options.size()));
  }

  void note(String line) {
    trace.add(now + "ms " + line);
    if (trace.size() > 400) {
      trace.remove(0);
    }
  }

  /** Counts one more {@code event}: what the runs explored, so a test can tell a simulation that explores nothing. */
  void count(String event) {
    counts.merge(event, 1L, Long::sum);
  }

  Map<String, Long> counts() {
    return counts;
  }

  /** The last things that happened, for a failure's report. */
  List<String> trace() {
    return List.copyOf(trace);
  }
}
