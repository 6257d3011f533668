package dev.warehouse.gateway.auth;

/** {@code AUTH_MODE}: whether the gateway asks its callers who they are. */
public enum AuthMode {
  /**
   * Every call but health needs a bearer JWT (or, on a TLS connection, a client certificate whose
   * identity the policy names), and the policy must allow its method. The default.
   */
  JWT,
  /** Nobody is asked; every call is forwarded. Only by explicit choice, and logged as a warning at start. */
  NONE;

  public String settingValue() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
