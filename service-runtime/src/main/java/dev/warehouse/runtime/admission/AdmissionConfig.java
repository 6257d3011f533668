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
 * @param maxStreams  how many calls one client connection may have open at once ({@code GRPC_MAX_CONCURRENT_STREAMS},
 *                    HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS): a client's further calls wait at the client, so a
 *                    flood on one connection is held in the client's memory, not in this process's heap
 */
public record AdmissionConfig(Optional<Integer> fixedLimit, int minLimit, int maxLimit, Duration retryAfter,
    int maxStreams) {

  /** A small store (moto serializes every request) must be able to fall to a few calls in flight. */
  public static final int DEFAULT_MIN_LIMIT = 4;
  /** Far above what one instance serves at low latency, and low enough to bound its memory. */
  public static final int DEFAULT_MAX_LIMIT = 500;
  public static final Duration DEFAULT_RETRY_AFTER = Duration.ofMillis(100);
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
      new AdmissionConfig(Optional.empty(), DEFAULT_MIN_LIMIT, DEFAULT_MAX_LIMIT, DEFAULT_RETRY_AFTER, SERVICE_MAX_STREAMS);

  public AdmissionConfig {
    if (minLimit < 1 || maxLimit < minLimit) {
      throw new IllegalArgumentException("need 1 <= min limit <= max limit, got " + minLimit + " and " + maxLimit);
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
        SERVICE_MAX_STREAMS);
  }

  /** The same, with {@code maxStreams} calls at once per client connection. */
  public AdmissionConfig withMaxStreams(int maxStreams) {
    return new AdmissionConfig(fixedLimit, minLimit, maxLimit, retryAfter, maxStreams);
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
    int maxStreams = reader.positiveInt("GRPC_MAX_CONCURRENT_STREAMS", defaultMaxStreams);
    return new AdmissionConfig(fixed, min, max, retryAfter, maxStreams);
  }

  /** Fields of the start-up log line. */
  public Fields fields() {
    return new Fields().add("admission_limit", fixedLimit.map(String::valueOf).orElse("adaptive"))
        .add("admission_min_limit", minLimit).add("admission_max_limit", maxLimit)
        .add("admission_retry_after_ms", retryAfter.toMillis()).add("grpc_max_concurrent_streams", maxStreams);
  }

  /** {@link #fields} as {@code key=value key=value}. */
  public String describe() {
    return fields().toString();
  }
}
