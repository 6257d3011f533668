package dev.warehouse.runtime.error;

import java.util.Map;

/**
 * A failure the caller should hear about, in domain terms. Each subclass stands for one gRPC status
 * (mapped in one place, {@code dev.warehouse.runtime.grpc.GrpcErrors}); {@link #reason()} is the
 * UPPER_SNAKE_CASE reason of the {@code google.rpc.ErrorInfo}, {@link #metadata()} its variables.
 * Messages are written for clients: they never carry SDK text or internal state.
 */
public abstract class ClientFacingException extends RuntimeException {

  private final String reason;
  private final Map<String, String> metadata;

  protected ClientFacingException(String reason, String message, Map<String, String> metadata) {
    this(reason, message, metadata, null);
  }

  /** The cause is kept for the server log only; it never reaches the client. */
  protected ClientFacingException(String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(message, cause, false, false);
    this.reason = reason;
    this.metadata = Map.copyOf(metadata);
  }

  public String reason() {
    return reason;
  }

  public Map<String, String> metadata() {
    return metadata;
  }
}
