package dev.warehouse.runtime.error;

import java.util.Map;

/**
 * The caller did not prove who it is: no credential, or one that was not accepted (a bad signature, an
 * expired token...). Maps to UNAUTHENTICATED. The message says which check failed, never the credential.
 */
public final class UnauthenticatedException extends ClientFacingException {

  public UnauthenticatedException(String reason, String message) {
    super(reason, message, Map.of());
  }
}
