package dev.warehouse.gateway.auth;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What each caller may send through the gateway, from the policy file's {@code quotas} section:
 *
 * <pre>
 * quotas:
 *   default: {rate: 50, burst: 100, concurrency: 20}      # every caller the file does not name
 *   callers:                                               # by identity: a token's sub, a certificate's URI SAN
 *     storefront-eu: {rate: 400, burst: 800, concurrency: 100}
 * </pre>
 *
 * {@code rate} is calls a second, refilled continuously; {@code burst} how many of them a caller idle for a while
 * may send at once (at least 1); {@code concurrency} how many calls it may have in flight through the gateway at
 * once. A file without the section sets no quota ({@link #NONE}).
 */
public record QuotaPolicy(Optional<Quota> defaultQuota, Map<String, Quota> callers) {

  /** No quotas: every caller limited only by the gateway's concurrency limits. */
  public static final QuotaPolicy NONE = new QuotaPolicy(Optional.empty(), Map.of());

  /** One caller's quota. */
  public record Quota(double rate, int burst, int concurrency) {
    public Quota {
      if (!(rate > 0) || Double.isInfinite(rate) || burst < 1 || concurrency < 1) {
        throw new IllegalArgumentException("a quota needs rate > 0, burst >= 1 and concurrency >= 1");
      }
    }

    /** {@code rate 50/s, burst 100, concurrency 20}: what a refusal's QuotaFailure describes. */
    public String describe() {
      return "rate " + (rate == Math.rint(rate) ? Long.toString((long) rate) : Double.toString(rate)) + "/s, burst "
          + burst + ", concurrency " + concurrency;
    }
  }

  public QuotaPolicy {
    callers = Map.copyOf(callers);
  }

  /** Whether any caller has a quota. */
  public boolean limits() {
    return defaultQuota.isPresent() || !callers.isEmpty();
  }

  /** The quota of {@code identity}: its own, else the default; none when neither is set. */
  public Optional<Quota> of(String identity) {
    Quota own = callers.get(identity);
    return own != null ? Optional.of(own) : defaultQuota;
  }

  /** The {@code quotas} section ({@code null}: absent), adding what is wrong with it to {@code problems}. */
  static QuotaPolicy parse(Object section, List<String> problems) {
    if (section == null) {
      return NONE;
    }
    if (!(section instanceof Map<?, ?> map)) {
      problems.add("'quotas' must be a mapping with 'default' and/or 'callers'");
      return NONE;
    }
    for (Object key : map.keySet()) {
      if (!"default".equals(key) && !"callers".equals(key)) {
        problems.add("quotas: unknown key '" + key + "' (only 'default' and 'callers')");
      }
    }
    Optional<Quota> fallback = map.containsKey("default")
        ? quota("quotas.default", map.get("default"), problems) : Optional.empty();
    Map<String, Quota> callers = new LinkedHashMap<>();
    Object named = map.get("callers");
    if (named instanceof Map<?, ?> byCaller) {
      byCaller.forEach((identity, value) -> quota("quotas.callers." + identity, value, problems)
          .ifPresent(q -> callers.put(String.valueOf(identity), q)));
    } else if (named != null) {
      problems.add("quotas.callers must map each caller's identity to its quota");
    }
    return new QuotaPolicy(fallback, callers);
  }

  private static Optional<Quota> quota(String where, Object value, List<String> problems) {
    if (!(value instanceof Map<?, ?> map) || !map.keySet().equals(java.util.Set.of("rate", "burst", "concurrency"))) {
      problems.add(where + " must be {rate: calls a second, burst: calls, concurrency: calls}, got '" + value + "'");
      return Optional.empty();
    }
    if (!(map.get("rate") instanceof Number rate) || !(map.get("burst") instanceof Integer burst)
        || !(map.get("concurrency") instanceof Integer concurrency)) {
      problems.add(where + ": rate is a number, burst and concurrency whole numbers, got '" + value + "'");
      return Optional.empty();
    }
    try {
      return Optional.of(new Quota(rate.doubleValue(), burst, concurrency));
    } catch (IllegalArgumentException e) {
      problems.add(where + ": " + e.getMessage() + ", got '" + value + "'");
      return Optional.empty();
    }
  }

  /** The start-up line's description: {@code default=rate 50/s, burst 100, concurrency 20 callers=2}. */
  public String describe() {
    if (!limits()) {
      return "none";
    }
    return "default=" + defaultQuota.map(Quota::describe).orElse("none") + " callers=" + callers.size();
  }
}
