package dev.warehouse.runtime.error;

import java.util.Map;

/** The requested entity does not exist. Maps to NOT_FOUND. */
public class NotFoundException extends ClientFacingException {

  public NotFoundException(String reason, String message, Map<String, String> metadata) {
    super(reason, message, metadata);
  }

  public NotFoundException(String reason, String message) {
    this(reason, message, Map.of());
  }
}
