package dev.warehouse.gateway.auth;

import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tokens whose every check already passed, with the caller each names: a client sends the same token
 * on every call until it expires, and the signature check is the dearest part of a call through the
 * gateway (an ES256 verification costs a millisecond of CPU on the JDK 17 provider; the figures are in
 * docs/performance-log.md). An entry answers only while
 *
 * <ul>
 *   <li>the token has not expired (its {@code exp} plus the clock skew, as the verifier would judge);
 *   <li>the key set it was verified against is still the one in use: any change of the JWKS (a key
 *       removed after a compromise, say) forgets every entry.
 * </ul>
 *
 * Only tokens that passed are kept, so nobody can fill it without valid tokens; at {@code capacity} it
 * drops the expired entries, and then, if still full, all of them. A capacity of 0 turns it off.
 * Authorization is not cached: the policy is asked on every call.
 */
final class VerifiedTokens {

  /** Enough for every caller of a busy gateway; each entry is about a token's length (under 2 KB). */
  static final int DEFAULT_CAPACITY = 10_000;

  private record Entry(Caller caller, Instant expires, Object keys) {}

  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
  private final int capacity;
  private final Clock clock;

  VerifiedTokens(int capacity, Clock clock) {
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity must not be negative: " + capacity);
    }
    this.capacity = capacity;
    this.clock = clock;
  }

  /** The caller {@code token} names, if it was verified against {@code keys} and has not expired; or null. */
  Caller get(String token, Object keys) {
    if (capacity == 0) {
      return null;
    }
    Entry entry = entries.get(token);
    if (entry == null) {
      return null;
    }
    if (entry.keys != keys || !clock.instant().isBefore(entry.expires)) {
      entries.remove(token, entry);
      return null;
    }
    return entry.caller;
  }

  /** Remembers that {@code token}, verified against {@code keys}, names {@code caller} until {@code expires}. */
  void put(String token, Caller caller, Instant expires, Object keys) {
    if (capacity == 0) {
      return;
    }
    if (entries.size() >= capacity) {
      Instant now = clock.instant();
      entries.values().removeIf(entry -> entry.keys != keys || !now.isBefore(entry.expires));
      if (entries.size() >= capacity) {
        entries.clear();
      }
    }
    entries.put(token, new Entry(caller, expires, keys));
  }

  int size() {
    return entries.size();
  }
}
