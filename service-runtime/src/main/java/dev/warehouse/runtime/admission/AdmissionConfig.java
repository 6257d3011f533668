package dev.warehouse.runtime.admission;

import dev.warehouse.runtime.config.EnvReader;
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
 */
public record AdmissionConfig(Optional<Integer> fixedLimit, int minLimit, int maxLimit, Duration retryAfter) {

  /** A small store (moto serializes every request) must be able to fall to a few calls in flight. */
  public static final int DEFAULT_MIN_LIMIT = 4;
  /** Far above what one instance serves at low latency, and low enough to bound its memory. */
  public static final int DEFAULT_MAX_LIMIT = 500;
  public static final Duration DEFAULT_RETRY_AFTER = Duration.ofMillis(100);
  public static final AdmissionConfig DEFAULT =
      new AdmissionConfig(Optional.empty(), DEFAULT_MIN_LIMIT, DEFAULT_MAX_LIMIT, DEFAULT_RETRY_AFTER);

  public AdmissionConfig {
    if (minLimit < 1 || maxLimit < minLimit) {
      throw new IllegalArgumentException("need 1 <= min limit <= max limit, got " + minLimit + " and " + maxLimit);
    }
    fixedLimit.ifPresent(limit -> {
      if (limit < 1) {
        throw new IllegalArgumentException("a fixed limit must be at least 1, got " + limit);
      }
    });
  }

  /** A fixed limit of {@code limit} calls at once. */
  public static AdmissionConfig fixed(int limit) {
    return new AdmissionConfig(Optional.of(limit), DEFAULT_MIN_LIMIT, Math.max(limit, DEFAULT_MAX_LIMIT), DEFAULT_RETRY_AFTER);
  }

  /** Reads the settings, reporting malformed ones to {@code reader}; the defaults stand in for those. */
  public static AdmissionConfig read(EnvReader reader) {
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
    return new AdmissionConfig(fixed, min, max, retryAfter);
  }

  /** For the start-up log line. */
  public String describe() {
    return "admission_limit=" + fixedLimit.map(String::valueOf).orElse("adaptive") + " admission_min_limit=" + minLimit
        + " admission_max_limit=" + maxLimit + " admission_retry_after_ms=" + retryAfter.toMillis();
  }
}
