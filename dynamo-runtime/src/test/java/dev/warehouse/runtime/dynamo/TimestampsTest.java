package dev.warehouse.runtime.dynamo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TimestampsTest {

  @Test
  void readsBackEveryInstantWeWrite() {
    SplittableRandom random = new SplittableRandom(7);
    long from = Instant.parse("0001-01-01T00:00:00Z").getEpochSecond();
    long to = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
    for (int i = 0; i < 200_000; i++) {
      // Whole seconds, milliseconds, microseconds and nanoseconds: toString() prints 0, 3, 6 or 9 digits.
      int nanos = switch (i % 4) {
        case 0 -> 0;
        case 1 -> random.nextInt(1000) * 1_000_000;
        case 2 -> random.nextInt(1_000_000) * 1_000;
        default -> random.nextInt(1_000_000_000);
      };
      Instant instant = Instant.ofEpochSecond(random.nextLong(from, to + 1), nanos);
      assertEquals(instant, Timestamps.parse(instant.toString()), instant.toString());
    }
  }

  /** Other shapes, odd and wrong ones included: the same answer, or the same refusal, as Instant.parse. */
  @Test
  void answersAsInstantParseDoesOnAnythingElse() {
    for (String text : new String[] {"2026-12-02T19:55:38.1Z", "2026-12-02T19:55:38.12345Z", "2024-02-29T00:00:00Z",
        "1969-12-31T23:59:59.999999999Z", "+12026-12-02T19:55:38Z", "2026-12-02T19:55:38+00:00",
        "2026-12-02T24:00:00Z", "2016-12-31T23:59:60Z", "2026-12-02T19:55:38.Z"}) {
      assertEquals(Instant.parse(text), Timestamps.parse(text), text);
    }
    for (String text : new String[] {"2026-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-12-02T25:00:00Z", "2026-12-02T19:60:00Z", "2026-12-02T19:55:38.1234567890Z", "2026-12-02 19:55:38Z",
        "2026-1a-02T19:55:38Z", "2026-12-02T19:55:38", ""}) {
      assertThrows(DateTimeParseException.class, () -> Instant.parse(text), text);
      assertThrows(DateTimeParseException.class, () -> Timestamps.parse(text), text);
    }
  }
}
