package dev.warehouse.runtime.dynamo;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;

/**
 * Reads the timestamps items hold ({@link Instant#toString()}: {@code 2026-12-02T19:55:38.123Z}).
 * {@link Instant#parse} runs the general ISO formatter, which allocated more per call than the rest
 * of mapping an item (a third of the inventory-service's allocation on a page of 25); this reads the
 * one shape we write directly and leaves anything else to {@link Instant#parse}.
 */
public final class Timestamps {

  private Timestamps() {}

  public static Instant parse(String text) {
    Instant fast = parseCanonical(text);
    return fast != null ? fast : Instant.parse(text);
  }

  /** {@code yyyy-MM-ddTHH:mm:ss[.f…]Z} with 1 to 9 fraction digits, or null for anything else. */
  private static Instant parseCanonical(String s) {
    int n = s.length();
    if (n < 20 || n > 30 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T' || s.charAt(13) != ':'
        || s.charAt(16) != ':' || s.charAt(n - 1) != 'Z') {
      return null;
    }
    int year = digits(s, 0, 4);
    int month = digits(s, 5, 7);
    int day = digits(s, 8, 10);
    int hour = digits(s, 11, 13);
    int minute = digits(s, 14, 16);
    int second = digits(s, 17, 19);
    if (year < 0 || month < 0 || day < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0
        || second > 59) {
      return null;
    }
    int nanos = 0;
    if (n > 20) {
      int fractionDigits = n - 21;
      if (s.charAt(19) != '.' || fractionDigits < 1) {
        return null;
      }
      int fraction = digits(s, 20, n - 1);
      if (fraction < 0) {
        return null;
      }
      nanos = fraction;
      for (int i = fractionDigits; i < 9; i++) {
        nanos *= 10;
      }
    } else if (s.charAt(19) != 'Z') {
      return null;
    }
    long epochDay;
    try {
      epochDay = LocalDate.of(year, month, day).toEpochDay();
    } catch (DateTimeException e) {
      return null; // Instant.parse reports it
    }
    return Instant.ofEpochSecond(epochDay * 86_400 + hour * 3_600L + minute * 60L + second, nanos);
  }

  /** The decimal number in {@code s[from, to)}, or -1 if a character is not a digit. */
  private static int digits(String s, int from, int to) {
    int value = 0;
    for (int i = from; i < to; i++) {
      int d = s.charAt(i) - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      value = value * 10 + d;
    }
    return value;
  }
}
