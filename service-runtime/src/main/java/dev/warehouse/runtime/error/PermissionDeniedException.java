package dev.warehouse.runtime.error;

import java.util.Map;

/** The caller is known, and may not do this. Maps to PERMISSION_DENIED. */
public final class PermissionDeniedException extends ClientFacingException {

  public PermissionDeniedException(String reason, String message, Map<String, String> metadata) {
    super(reason, message, metadata);
  }
}
