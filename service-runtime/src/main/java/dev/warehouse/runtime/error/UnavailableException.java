package dev.warehouse.runtime.error;

import java.util.Map;

/** A dependency is unreachable or throttling us; the caller may retry later. Maps to UNAVAILABLE. */
public final class UnavailableException extends ClientFacingException {

  public UnavailableException(String reason, String message, Map<String, String> metadata) {
    super(reason, message, metadata);
  }

  public UnavailableException(String reason, String message) {
    this(reason, message, Map.of());
  }

  public UnavailableException(String reason, String message, Throwable cause) {
    super(reason, message, Map.of(), cause);
  }
}
