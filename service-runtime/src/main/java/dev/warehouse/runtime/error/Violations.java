package dev.warehouse.runtime.error;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Collects every bad field of a request, so one INVALID_ARGUMENT names them all.
 *
 * <p>IDs are 1 to {@value #MAX_ID_LENGTH} characters of letters, digits, '.', '_', ':' and '-'. The
 * allow-list keeps the key delimiter '#' (and control characters) out of every key, so no input can
 * forge the key of another item.
 */
public final class Violations {

  public static final int MAX_ID_LENGTH = 64;
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1," + MAX_ID_LENGTH + "}");

  private final List<FieldViolation> violations = new ArrayList<>();

  public Violations add(String field, String description) {
    violations.add(new FieldViolation(field, description));
    return this;
  }

  /** Checks an identifier that becomes part of a key; returns it unchanged. */
  public String id(String field, String value) {
    if (value == null || value.isEmpty()) {
      add(field, "is required");
    } else if (value.length() > MAX_ID_LENGTH) {
      add(field, "must be at most " + MAX_ID_LENGTH + " characters");
    } else if (!ID.matcher(value).matches()) {
      add(field, "may contain only letters, digits, '.', '_', ':' and '-'");
    }
    return value;
  }

  /** Checks free text: at most {@code maxLength} characters and no control characters. */
  public String text(String field, String value, int maxLength) {
    if (value.length() > maxLength) {
      add(field, "must be at most " + maxLength + " characters");
    } else if (value.chars().anyMatch(Character::isISOControl)) {
      add(field, "must not contain control characters");
    }
    return value;
  }

  /** How many violations were collected so far. */
  public int count() {
    return violations.size();
  }

  public boolean isEmpty() {
    return violations.isEmpty();
  }

  /** @throws InvalidArgumentException naming every violation collected so far */
  public void throwIfAny() {
    if (!violations.isEmpty()) {
      throw new InvalidArgumentException(violations);
    }
  }
}
