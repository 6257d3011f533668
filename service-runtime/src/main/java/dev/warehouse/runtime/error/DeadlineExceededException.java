package dev.warehouse.runtime.error;

import java.util.Map;

/** The caller's deadline passed before the work could finish; nothing more is attempted. Maps to DEADLINE_EXCEEDED. */
public final class DeadlineExceededException extends ClientFacingException {

  public DeadlineExceededException(String reason, String message, Throwable cause) {
    super(reason, message, Map.of(), cause);
  }

  public DeadlineExceededException(String reason, String message, Map<String, String> metadata) {
    super(reason, message, metadata);
  }
}
