package dev.warehouse.runtime.tls;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** How one hop's connections are secured: its server's port, or a client's channels. */
public enum TlsMode {
  /** No TLS: anyone who can reach the port can call it. */
  PLAINTEXT,
  /** TLS with the server's certificate; a client certificate is verified when one is offered, not required. */
  TLS,
  /** Mutual TLS: both ends present a certificate from the trusted CA. */
  MTLS;

  /** The values as the environment spells them. */
  public static final List<String> NAMES = Arrays.stream(values()).map(TlsMode::text).toList();

  public String text() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static TlsMode of(String text) {
    return valueOf(text.toUpperCase(Locale.ROOT));
  }
}
