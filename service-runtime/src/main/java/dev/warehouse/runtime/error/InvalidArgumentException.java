package dev.warehouse.runtime.error;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** The request is malformed; maps to INVALID_ARGUMENT with a {@code google.rpc.BadRequest}. */
public final class InvalidArgumentException extends ClientFacingException {

  private final List<FieldViolation> violations;

  public InvalidArgumentException(List<FieldViolation> violations) {
    super("INVALID_ARGUMENT", describe(violations), Map.of());
    if (violations.isEmpty()) {
      throw new IllegalArgumentException("an invalid argument needs at least one violation");
    }
    this.violations = List.copyOf(violations);
  }

  public static InvalidArgumentException of(String field, String description) {
    return new InvalidArgumentException(List.of(new FieldViolation(field, description)));
  }

  public List<FieldViolation> violations() {
    return violations;
  }

  private static String describe(List<FieldViolation> violations) {
    return "invalid request: " + violations.stream()
        .map(v -> v.field() + ": " + v.description())
        .collect(Collectors.joining("; "));
  }
}
