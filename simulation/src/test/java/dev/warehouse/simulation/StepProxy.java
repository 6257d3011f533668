package dev.warehouse.simulation;

import dev.warehouse.runtime.testing.MotoRelay;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpRequest;

/**
 * An HTTP proxy in front of moto that lets DynamoDB requests through one at a time, in an order the test
 * chooses: each request waits here ("parked") until the test releases it, with an outcome. Requests name
 * their actor (a header, {@link #tagging}); the test waits until every live actor has a request parked and
 * no more are arriving ({@link #parked}), picks one, and so explores the interleavings of real repository
 * code at the granularity where they differ, each request applied by moto with its real conditions.
 */
final class StepProxy implements AutoCloseable {

  static final String ACTOR_HEADER = "x-sim-actor";
  /** How long no new request must arrive before the parked set counts as settled (requests sent "at once"). */
  private static final long SETTLE_NANOS = TimeUnit.MILLISECONDS.toNanos(4);

  /** What a released request meets. */
  enum Outcome {
    /** Forwarded and answered. */
    APPLIED,
    /** Refused as DynamoDB refuses a request that met another transaction on one of its items. */
    CONFLICT,
    /** Forwarded, applied by moto, and its connection closed unanswered: the caller cannot know. */
    ANSWER_LOST
  }

  /** A request waiting for the test. */
  static final class Parked {
    final String actor;
    final String operation;
    final String body;
    final long arrival;
    private final CompletableFuture<Outcome> decision = new CompletableFuture<>();
    private final CompletableFuture<Integer> answered = new CompletableFuture<>();

    private Parked(String actor, String operation, String body, long arrival) {
      this.actor = actor;
      this.operation = operation;
      this.body = body;
      this.arrival = arrival;
    }

    /** Can DynamoDB refuse this request with a conflict? Only requests that touch an item a transaction may hold. */
    boolean conflictable() {
      return !operation.equals("GetItem") && !operation.equals("BatchGetItem") && !operation.equals("Query");
    }

    boolean writes() {
      return operation.equals("TransactWriteItems") || operation.equals("UpdateItem") || operation.equals("PutItem")
          || operation.equals("DeleteItem");
    }
  }

  private final MotoRelay moto;
  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "step-proxy");
    t.setDaemon(true);
    return t;
  });
  private final Object lock = new Object();
  private final List<Parked> parked = new ArrayList<>();
  private final Set<String> live = new HashSet<>();
  private long arrivals;
  private long lastArrivalNanos;

  StepProxy(URI target) throws IOException {
    this.moto = new MotoRelay(target);
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** The interceptor that names {@code actor} on every request of the client it is added to. */
  static ExecutionInterceptor tagging(String actor) {
    return new ExecutionInterceptor() {
      @Override
      public SdkHttpRequest modifyHttpRequest(Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
        return context.httpRequest().toBuilder().putHeader(ACTOR_HEADER, actor).build();
      }
    };
  }

  void live(String actor) {
    synchronized (lock) {
      live.add(actor);
      lock.notifyAll();
    }
  }

  void done(String actor) {
    synchronized (lock) {
      live.remove(actor);
      lock.notifyAll();
    }
  }

  /**
   * The parked requests once settled: every live actor has one parked and none arrived for a few
   * milliseconds; in a stable order (actor, then arrival). Empty when no actor is live.
   *
   * @throws AssertionError when an actor neither sends nor ends within {@code patience}
   */
  List<Parked> parked(Duration patience) throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    synchronized (lock) {
      while (true) {
        Set<String> waiting = new HashSet<>(live);
        parked.forEach(p -> waiting.remove(p.actor));
        long quietFor = System.nanoTime() - lastArrivalNanos;
        if (waiting.isEmpty() && quietFor >= SETTLE_NANOS) {
          List<Parked> settled = new ArrayList<>(parked);
          settled.sort(Comparator.comparing((Parked p) -> p.actor).thenComparingLong(p -> p.arrival));
          return settled;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("actors " + waiting + " neither sent a request nor ended within " + patience);
        }
        long waitNanos = waiting.isEmpty() ? SETTLE_NANOS - quietFor : left;
        TimeUnit.NANOSECONDS.timedWait(lock, Math.max(1, Math.min(waitNanos, left)));
      }
    }
  }

  /** Lets {@code request} go with {@code outcome} and waits until its caller has been answered (or cut off). */
  void release(Parked request, Outcome outcome) {
    synchronized (lock) {
      parked.remove(request);
    }
    request.decision.complete(outcome);
    request.answered.orTimeout(30, TimeUnit.SECONDS).join();
  }

  private void handle(HttpExchange exchange) throws IOException {
    byte[] body;
    try (InputStream in = exchange.getRequestBody()) {
      body = in.readAllBytes();
    }
    String actor = exchange.getRequestHeaders().getFirst(ACTOR_HEADER);
    String amzTarget = exchange.getRequestHeaders().getFirst("X-Amz-Target");
    String operation = amzTarget == null ? "" : amzTarget.substring(amzTarget.indexOf('.') + 1);
    if (actor == null) {
      MotoRelay.answer(exchange, moto.forward(exchange, body));
      return;
    }
    Parked request;
    synchronized (lock) {
      request = new Parked(actor, operation, new String(body, StandardCharsets.UTF_8), arrivals++);
      parked.add(request);
      lastArrivalNanos = System.nanoTime();
      lock.notifyAll();
    }
    try {
      Outcome outcome = request.decision.get(60, TimeUnit.SECONDS);
      switch (outcome) {
        case APPLIED -> MotoRelay.answer(exchange, moto.forward(exchange, body));
        case CONFLICT -> conflict(exchange, request);
        case ANSWER_LOST -> {
          moto.forward(exchange, body);
          // Throwing from the handler makes the server close the connection without an answer.
          throw new IOException("answer lost on purpose");
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IOException("never released", e);
    } finally {
      request.answered.complete(1);
    }
  }

  /** DynamoDB's answer to a request that met another transaction: per item for a transaction, else its own error. */
  private static void conflict(HttpExchange exchange, Parked request) throws IOException {
    String json;
    if (request.operation.startsWith("Transact")) {
      int items = Math.max(1, request.body.split("\"TableName\"", -1).length - 1);
      StringBuilder reasons = new StringBuilder("[{\"Code\":\"TransactionConflict\",\"Message\":\"simulated\"}");
      for (int i = 1; i < items; i++) {
        reasons.append(",{\"Code\":\"None\"}");
      }
      json = "{\"__type\":\"" + MotoRelay.ERROR_TYPE_PREFIX
          + "TransactionCanceledException\",\"message\":\"Transaction cancelled "
          + "[TransactionConflict]\",\"CancellationReasons\":" + reasons + "]}";
    } else {
      json = "{\"__type\":\"" + MotoRelay.ERROR_TYPE_PREFIX
          + "TransactionConflictException\",\"message\":\"Transaction is ongoing "
          + "for the item\"}";
    }
    MotoRelay.answerError(exchange, 400, json);
  }




  @Override
  public void close() {
    synchronized (lock) {
      parked.forEach(p -> p.decision.complete(Outcome.APPLIED));
      parked.clear();
    }
    server.stop(0);
    executor.shutdownNow();
  }
}
