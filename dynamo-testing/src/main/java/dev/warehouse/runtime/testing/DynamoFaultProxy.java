package dev.warehouse.runtime.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;

/**
 * A test-only HTTP proxy between a service and moto that injects faults on chosen DynamoDB
 * operations: {@code TransactionConflict} and throttling cancellations, throttling, HTTP 500s,
 * dropped connections, delays before forwarding, late answers (forwarded at once, so the write
 * is applied, but answered only after a delay), and batch reads that process none of their keys. moto never produces these by itself.
 *
 * <p>It also runs hooks ({@link #whenSeen}): an action, such as a SIGKILL of a service process, run at an
 * exact point of one chosen request (before moto sees it, or after moto applied it), whose answer is then
 * lost. So a crash lands between two named writes instead of at a random moment.
 */
public final class DynamoFaultProxy implements AutoCloseable {

  /** What to do to a request instead of (or before) forwarding it. */
  public enum Fault {
    TRANSACTION_CONFLICT, TRANSACTION_THROTTLED, THROTTLING, HTTP_500, DROP_CONNECTION, DELAY, LATE_ANSWER,
    /** A BatchGetItem answered with every key it asked for unprocessed, as DynamoDB does when throttled. */
    UNPROCESSED_KEYS,
    /** A DescribeTable answered as moto answers it, but with the table still CREATING, as DynamoDB answers while it makes one. */
    TABLE_CREATING
  }

  /** Where a {@link #whenSeen} hook acts on the request it matched; either way the caller gets no answer. */
  public enum Phase {
    /** The action runs, then the connection is closed unanswered: moto never sees the request, nothing is applied. */
    BEFORE_FORWARD,
    /** The request is forwarded and applied by moto, then the action runs, then the connection is closed unanswered. */
    AFTER_APPLIED
  }


  /** A fault for the next {@code remaining} calls of an operation whose body holds {@code bodyContains} (null: any). */
  private record Rule(Fault fault, AtomicInteger remaining, Duration delay, String bodyContains) {

    Rule(Fault fault, AtomicInteger remaining, Duration delay) {
      this(fault, remaining, delay, null);
    }

    boolean matches(byte[] body) {
      return bodyContains == null || holds(body, bodyContains);
    }
  }

  /** The calls of an operation whose body holds a text, counted ({@link #count}). */
  private record Count(String operation, String bodyContains, AtomicInteger calls) {

    boolean matches(String operation, byte[] body) {
      return this.operation.equals(operation) && holds(body, bodyContains);
    }
  }

  /** An action for the next {@code remaining} calls of an operation whose body holds {@code bodyContains}. */
  private record Hook(String operation, String bodyContains, Phase phase, Runnable action, AtomicInteger remaining) {

    boolean matches(String operation, byte[] body) {
      return this.operation.equals(operation) && holds(body, bodyContains);
    }
  }

  private static final Pattern ACTIVE = Pattern.compile("\"TableStatus\"\\s*:\\s*\"ACTIVE\"");

  /** Whether a request's body holds {@code text}: how rules, hooks and counts pick their calls. */
  private static boolean holds(byte[] body, String text) {
    return new String(body, StandardCharsets.UTF_8).contains(text);
  }

  private final MotoRelay moto;
  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "fault-proxy");
    t.setDaemon(true);
    return t;
  });
  private final Map<String, Rule> rules = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
  private final List<Count> counts = new CopyOnWriteArrayList<>();
  private final AtomicInteger injected = new AtomicInteger();
  private final List<Hook> hooks = new CopyOnWriteArrayList<>();
  private final Map<String, Hold> holds = new ConcurrentHashMap<>();

  /** Calls of an operation held until {@code gate} opens, and how many more to hold. */
  private record Hold(AtomicInteger remaining, CountDownLatch gate) {}

  private DynamoFaultProxy(URI target) throws IOException {
    this.moto = new MotoRelay(target);
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  /** A proxy in front of {@code target} (moto's endpoint) that forwards everything until told otherwise. */
  public static DynamoFaultProxy start(URI target) {
    try {
      return new DynamoFaultProxy(target);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** Applies {@code fault} to the next {@code times} calls of {@code operation} (e.g. "TransactWriteItems"). */
  public void inject(String operation, Fault fault, int times) {
    rules.put(operation, new Rule(fault, new AtomicInteger(times), Duration.ofSeconds(1)));
  }

  /**
   * Applies {@code fault} to the next {@code times} calls of {@code operation} whose request body contains
   * {@code bodyContains}, as DynamoDB's JSON has it (a status value, a key): one transaction of a call that
   * sends several, say. Other calls of the operation are forwarded.
   */
  public void injectWhere(String operation, String bodyContains, Fault fault, int times) {
    rules.put(operation, new Rule(fault, new AtomicInteger(times), Duration.ofSeconds(1), bodyContains));
  }

  /** Delays the next {@code times} calls of {@code operation} by {@code delay} before forwarding them. */
  public void delay(String operation, Duration delay, int times) {
    rules.put(operation, new Rule(Fault.DELAY, new AtomicInteger(times), delay));
  }

  /**
   * Forwards the next {@code times} calls of {@code operation} at once but answers them only after
   * {@code delay}: a write that is applied while its caller has given up waiting.
   */
  public void answerLate(String operation, Duration delay, int times) {
    rules.put(operation, new Rule(Fault.LATE_ANSWER, new AtomicInteger(times), delay));
  }

  /**
   * Runs {@code action} on the next {@code times} calls of {@code operation} whose request body contains
   * {@code bodyContains} (as DynamoDB's JSON has it: a key prefix, a status value), at {@code phase}, and
   * then closes their connection without an answer. The action runs on the thread serving the call, so the
   * call is held until it returns: an action that kills the calling process (and waits for it to die) lands
   * exactly at that point, and the process never hears the answer. With {@link Phase#AFTER_APPLIED}, a call
   * moto refuses (a failed condition, a conflict) applied nothing: it is answered as usual, and the hook
   * waits for the next. Hooks come before faults; a call matching no hook is forwarded (or faulted) as usual.
   */
  public void whenSeen(String operation, String bodyContains, Phase phase, Runnable action, int times) {
    hooks.add(new Hook(operation, bodyContains, phase, action, new AtomicInteger(times)));
  }

  /** Stops injecting and drops the hooks; counts are kept, and {@link #count}'s stop. */
  public void clear() {
    counts.clear();
    rules.clear();
    hooks.clear();
    holds.values().forEach(hold -> hold.gate().countDown());
    holds.clear();
  }

  /**
   * Holds the next {@code times} calls of {@code operation} before forwarding them, until the returned
   * gate is counted down (or 30 s pass): calls kept in flight for exactly as long as a test needs them.
   */
  public CountDownLatch hold(String operation, int times) {
    CountDownLatch gate = new CountDownLatch(1);
    holds.put(operation, new Hold(new AtomicInteger(times), gate));
    return gate;
  }

  /**
   * From now on, counts the calls of {@code operation} whose body holds {@code bodyContains} (an order's id, say):
   * one test's own calls, apart from any another test or a background loop sends meanwhile.
   */
  public IntSupplier count(String operation, String bodyContains) {
    Count count = new Count(operation, bodyContains, new AtomicInteger());
    counts.add(count);
    return count.calls()::get;
  }

  /** Calls of {@code operation} seen so far, faulted or not. */
  public int calls(String operation) {
    return seen.getOrDefault(operation, new AtomicInteger()).get();
  }

  /** Faults injected so far. */
  public int injected() {
    return injected.get();
  }

  private void handle(HttpExchange exchange) throws IOException {
    byte[] body;
    try (InputStream in = exchange.getRequestBody()) {
      body = in.readAllBytes();
    }
    String target = exchange.getRequestHeaders().getFirst("X-Amz-Target");
    String operation = target == null ? "" : target.substring(target.indexOf('.') + 1);
    seen.computeIfAbsent(operation, k -> new AtomicInteger()).incrementAndGet();
    counts.stream().filter(c -> c.matches(operation, body)).forEach(c -> c.calls().incrementAndGet());
    for (Hook hook : hooks) {
      if (hook.matches(operation, body) && hook.remaining().getAndDecrement() > 0) {
        if (hook.phase() == Phase.AFTER_APPLIED) {
          HttpResponse<byte[]> applied = moto.forward(exchange, body);
          if (applied.statusCode() != 200) {
            // Refused (a condition, a conflict): nothing was applied, so this is not the hook's point. Answer it.
            hook.remaining().incrementAndGet();
            MotoRelay.answer(exchange, applied);
            return;
          }
        }
        hook.action().run();
        // Throwing from the handler makes the server close the connection without an answer.
        throw new IOException("hook on " + operation + " ran " + hook.phase() + ": answer dropped");
      }
    }
    Hold hold = holds.get(operation);
    if (hold != null && hold.remaining().getAndDecrement() > 0) {
      try {
        hold.gate().await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    Rule rule = rules.get(operation);
    if (rule != null && rule.matches(body) && rule.remaining().getAndDecrement() > 0) {
      injected.incrementAndGet();
      switch (rule.fault()) {
        case TRANSACTION_CONFLICT -> {
          respondError(exchange, 400, "TransactionCanceledException", cancellationReasons(body, "TransactionConflict"));
          return;
        }
        case TRANSACTION_THROTTLED -> {
          respondError(exchange, 400, "TransactionCanceledException", cancellationReasons(body, "ThrottlingError"));
          return;
        }
        case LATE_ANSWER -> {
          forward(exchange, body, rule.delay());
          return;
        }
        case THROTTLING -> {
          respondError(exchange, 400, "ThrottlingException", "");
          return;
        }
        case HTTP_500 -> {
          respondError(exchange, 500, "InternalServerError", "");
          return;
        }
        case DROP_CONNECTION -> {
          // Throwing from the handler makes the server close the connection without an answer.
          throw new IOException("fault injected: connection dropped");
        }
        case UNPROCESSED_KEYS -> {
          com.google.gson.JsonObject asked = com.google.gson.JsonParser.parseString(new String(body, StandardCharsets.UTF_8))
              .getAsJsonObject();
          com.google.gson.JsonObject answer = new com.google.gson.JsonObject();
          answer.add("Responses", new com.google.gson.JsonObject());
          answer.add("UnprocessedKeys", asked.get("RequestItems"));
          exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.0");
          MotoRelay.send(exchange, 200, answer.toString().getBytes(StandardCharsets.UTF_8));
          return;
        }
        case TABLE_CREATING -> {
          HttpResponse<byte[]> described = moto.forward(exchange, body);
          String table = ACTIVE.matcher(new String(described.body(), StandardCharsets.UTF_8))
              .replaceFirst("\"TableStatus\": \"CREATING\"");
          // A fresh answer: moto's checksum header would not match the changed body.
          exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.0");
          MotoRelay.send(exchange, described.statusCode(), table.getBytes(StandardCharsets.UTF_8));
          return;
        }
        case DELAY -> sleep(rule.delay());
      }
    }
    forward(exchange, body, Duration.ZERO);
  }

  private void forward(HttpExchange exchange, byte[] body, Duration answerAfter) throws IOException {
    HttpResponse<byte[]> response = moto.forward(exchange, body);
    sleep(answerAfter);
    MotoRelay.answer(exchange, response);
  }

  /** One cancellation reason per transaction item (each carries a TableName): the first has {@code code}. */
  private static String cancellationReasons(byte[] request, String code) {
    String text = new String(request, StandardCharsets.UTF_8);
    int items = Math.max(1, text.split("\"TableName\"", -1).length - 1);
    StringBuilder reasons = new StringBuilder(",\"CancellationReasons\":[{\"Code\":\"" + code + "\","
        + "\"Message\":\"fault injected\"}");
    for (int i = 1; i < items; i++) {
      reasons.append(",{\"Code\":\"None\"}");
    }
    return reasons.append(']').toString();
  }

  private static void respondError(HttpExchange exchange, int status, String type, String extra) throws IOException {
    String json = "{\"__type\":\"" + MotoRelay.ERROR_TYPE_PREFIX + type + "\",\"message\":\"fault injected: " + type
        + "\"" + extra + "}";
    MotoRelay.answerError(exchange, status, json);
  }


  /** The injected delay itself: a slow database, modelled. */
  private static void sleep(Duration delay) {
    try {
      Thread.sleep(delay.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
