package dev.warehouse.runtime.admission;

import dev.warehouse.runtime.env.EnvReader;
import dev.warehouse.runtime.log.Fields;
import java.time.Duration;
import java.util.Optional;

/**
 * How many calls a process lets work on its backend at once ({@code ADMISSION_*}).
 *
 * @param fixedLimit  a fixed limit per RPC ({@code ADMISSION_LIMIT} set to a number), for an operator who measured the
 *                    capacity, or a test; empty ({@code adaptive}, the default) lets the limit follow the latency
 * @param minLimit    the adaptive limit's floor ({@code ADMISSION_MIN_LIMIT}): below it a slow store still gets calls
 * @param maxLimit    the adaptive limit's ceiling ({@code ADMISSION_MAX_LIMIT}), which also bounds what is queued
 * @param retryAfter  the delay a refused caller is told to wait ({@code ADMISSION_RETRY_AFTER_MS}), as
 *                    {@code google.rpc.RetryInfo}
 * @param maxWait     how long a call over the limit may wait for a slot before it is refused
 *                    ({@code ADMISSION_MAX_WAIT_MS}); never more than half the time its caller has left, and 0 refuses
 *                    at once
 * @param maxQueue    how many calls of one route may wait at once ({@code ADMISSION_MAX_QUEUE}); past it, refused at once
 * @param maxStreams  how many calls one client connection may have open at once ({@code GRPC_MAX_CONCURRENT_STREAMS},
 *                    HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS): a client's further calls wait at the client, so a
 *                    flood on one connection is held in the client's memory, not in this process's heap
 */
public record AdmissionConfig(Optional<Integer> fixedLimit, int minLimit, int maxLimit, Duration retryAfter,
    Duration maxWait, int maxQueue, int maxStreams) {

  /** A small store (moto serializes every request) must be able to fall to a few calls in flight. */
  public static final int DEFAULT_MIN_LIMIT = 4;
  /** Far above what one instance serves at low latency, and low enough to bound its memory. */
  public static final int DEFAULT_MAX_LIMIT = 500;
  public static final Duration DEFAULT_RETRY_AFTER = Duration.ofMillis(100);
  /**
   * A burst is queued, not refused. In practice half the caller's time bounds the wait (the gateway's default
   * deadline is 5 s); this bounds it for callers with long deadlines. A cold stack's burst of 40 PlaceOrders
   * (twice its first limit, 20) waited up to 3 s on moto, which serves a few hundred requests a second in all.
   */
  public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(10);
  /** Waiting calls cost a few hundred bytes each: this bounds the heap they take per route. */
  public static final int DEFAULT_MAX_QUEUE = 1000;
  /**
   * A service's connections come from the gateway and the order-service, one per instance, whose own limits
   * decide what they send: this only bounds the heap, far above any of their limits' sum in use.
   */
  public static final int SERVICE_MAX_STREAMS = 1000;
  /**
   * The gateway's connections come from clients: past this many calls open on one connection (nginx allows
   * 128, Go's HTTP/2 server 250), its further calls wait at the client.
   */
  public static final int GATEWAY_MAX_STREAMS = 200;
  public static final AdmissionConfig DEFAULT =
      new AdmissionConfig(Optional.empty(), DEFAULT_MIN_LIMIT, DEFAULT_MAX_LIMIT, DEFAULT_RETRY_AFTER, DEFAULT_MAX_WAIT,
          DEFAULT_MAX_QUEUE, SERVICE_MAX_STREAMS);

  public AdmissionConfig {
    if (minLimit < 1 || maxLimit < minLimit) {
      throw new IllegalArgumentException("need 1 <= min limit <= max limit, got " + minLimit + " and " + maxLimit);
    }
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("the longest wait for a slot cannot be negative, got " + maxWait);
    }
    if (maxQueue < 0) {
      throw new IllegalArgumentException("the longest queue cannot be negative, got " + maxQueue);
    }
    if (maxStreams < 1) {
      throw new IllegalArgumentException("a connection must be allowed at least 1 call at once, got " + maxStreams);
    }
    fixedLimit.ifPresent(limit -> {
      if (limit < 1) {
        throw new IllegalArgumentException("a fixed limit must be at least 1, got " + limit);
      }
    });
  }

  /** A fixed limit of {@code limit} calls at once. */
  public static AdmissionConfig fixed(int limit) {
    return new AdmissionConfig(Optional.of(limit), DEFAULT_MIN_LIMIT, Math.max(limit, DEFAULT_MAX_LIMIT), DEFAULT_RETRY_AFTER,
        DEFAULT_MAX_WAIT, DEFAULT_MAX_QUEUE, SERVICE_MAX_STREAMS);
  }

  /** The same, with calls over the limit waiting at most {@code maxWait} ({@link Duration#ZERO}: refused at once). */
  public AdmissionConfig withMaxWait(Duration maxWait) {
    return new AdmissionConfig(fixedLimit, minLimit, maxLimit, retryAfter, maxWait, maxQueue, maxStreams);
  }

  /** The same, with {@code maxStreams} calls at once per client connection. */
  public AdmissionConfig withMaxStreams(int maxStreams) {
    return new AdmissionConfig(fixedLimit, minLimit, maxLimit, retryAfter, maxWait, maxQueue, maxStreams);
  }

  /**
   * Reads the settings, reporting malformed ones to {@code reader}; the defaults stand in for those.
   *
   * @param defaultMaxStreams {@link #SERVICE_MAX_STREAMS} or {@link #GATEWAY_MAX_STREAMS}
   */
  public static AdmissionConfig read(EnvReader reader, int defaultMaxStreams) {
    String limit = reader.string("ADMISSION_LIMIT", "adaptive").trim();
    Optional<Integer> fixed = Optional.empty();
    if (!limit.equals("adaptive")) {
      try {
        int value = Integer.parseInt(limit);
        if (value < 1) {
          reader.problem("ADMISSION_LIMIT must be 'adaptive' or a whole number of calls of at least 1, got '" + limit + "'");
        } else {
          fixed = Optional.of(value);
        }
      } catch (NumberFormatException e) {
        reader.problem("ADMISSION_LIMIT must be 'adaptive' or a whole number of calls of at least 1, got '" + limit + "'");
      }
    }
    int min = reader.positiveInt("ADMISSION_MIN_LIMIT", DEFAULT_MIN_LIMIT);
    int max = reader.positiveInt("ADMISSION_MAX_LIMIT", DEFAULT_MAX_LIMIT);
    if (max < min) {
      reader.problem("ADMISSION_MAX_LIMIT (" + max + ") must be at least ADMISSION_MIN_LIMIT (" + min + ")");
      max = min;
    }
    Duration retryAfter = Duration.ofMillis(reader.positiveLong("ADMISSION_RETRY_AFTER_MS", DEFAULT_RETRY_AFTER.toMillis()));
    Duration maxWait = Duration.ofMillis(reader.nonNegativeLong("ADMISSION_MAX_WAIT_MS", DEFAULT_MAX_WAIT.toMillis()));
    int maxQueue = reader.nonNegativeInt("ADMISSION_MAX_QUEUE", DEFAULT_MAX_QUEUE);
    int maxStreams = reader.positiveInt("GRPC_MAX_CONCURRENT_STREAMS", defaultMaxStreams);
    return new AdmissionConfig(fixed, min, max, retryAfter, maxWait, maxQueue, maxStreams);
  }

  /** Fields of the start-up log line. */
  public Fields fields() {
    return new Fields().add("admission_limit", fixedLimit.map(String::valueOf).orElse("adaptive"))
        .add("admission_min_limit", minLimit).add("admission_max_limit", maxLimit)
        .add("admission_retry_after_ms", retryAfter.toMillis()).add("admission_max_wait_ms", maxWait.toMillis())
        .add("admission_max_queue", maxQueue).add("grpc_max_concurrent_streams", maxStreams);
  }

  /** {@link #fields} as {@code key=value key=value}. */
  public String describe() {
    return fields().toString();
  }
}
