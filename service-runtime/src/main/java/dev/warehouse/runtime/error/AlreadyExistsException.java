package dev.warehouse.runtime.error;

import java.util.Map;

/** The entity to create already exists, or an idempotency key was reused for a different request. Maps to ALREADY_EXISTS. */
public final class AlreadyExistsException extends ClientFacingException {

  public AlreadyExistsException(String reason, String message, Map<String, String> metadata) {
    super(reason, message, metadata);
  }

  public AlreadyExistsException(String reason, String message) {
    this(reason, message, Map.of());
  }
}
