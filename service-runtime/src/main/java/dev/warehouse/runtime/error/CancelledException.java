package dev.warehouse.runtime.error;

import java.util.Map;

/** The caller cancelled the call; the work stopped. Maps to CANCELLED (which the caller no longer reads). */
public final class CancelledException extends ClientFacingException {

  public CancelledException(String reason, String message) {
    super(reason, message, Map.of());
  }
}
