package dev.warehouse.runtime.tls;

import dev.warehouse.runtime.env.EnvReader;
import dev.warehouse.runtime.log.Fields;

/**
 * How a process's client channels to one kind of peer are secured (the gateway's to the services),
 * with the identity and CA files of its {@link TlsConfig}.
 *
 * @param mode    {@code <PREFIX>TLS_MODE}: {@code plaintext} (default); {@code tls} verifies the servers'
 *                certificates against {@code TLS_CA_FILE}; {@code mtls} also presents {@code TLS_CERT_FILE}
 * @param servers {@code <PREFIX>TRUSTED_PEERS}: the identities (certificate URI SANs) the servers must carry;
 *                empty means any certificate the CA signed
 */
public record ChannelTlsConfig(TlsMode mode, TrustedPeers servers) {

  public static final ChannelTlsConfig PLAINTEXT = new ChannelTlsConfig(TlsMode.PLAINTEXT, TrustedPeers.ANY_FROM_CA);

  /**
   * Reads {@code prefix + "TLS_MODE"} and {@code prefix + "TRUSTED_PEERS"}, checking that {@code files}
   * has what the mode needs.
   */
  public static ChannelTlsConfig read(EnvReader reader, String prefix, TlsConfig files) {
    return readMode(reader, prefix + "TLS_MODE", files).withServers(reader, prefix + "TRUSTED_PEERS", prefix + "TLS_MODE");
  }

  /** Reads only the mode ({@code modeName}), checking that {@code files} has what it needs; any server of the CA. */
  public static ChannelTlsConfig readMode(EnvReader reader, String modeName, TlsConfig files) {
    TlsMode mode = TlsMode.of(reader.choice(modeName, TlsMode.PLAINTEXT.text(), TlsMode.NAMES));
    if (mode != TlsMode.PLAINTEXT && files.caFile().isEmpty()) {
      reader.problem(modeName + "=" + mode.text() + " needs TLS_CA_FILE to verify the servers' certificates");
    }
    if (mode == TlsMode.MTLS && files.certFile().isEmpty()) {
      reader.problem(modeName + "=mtls needs TLS_CERT_FILE and TLS_KEY_FILE: the certificate it presents");
    }
    return new ChannelTlsConfig(mode, TrustedPeers.ANY_FROM_CA);
  }

  /** This mode, with the servers' identities read from {@code peersName} (one channel's own, when several share a mode). */
  public ChannelTlsConfig withServers(EnvReader reader, String peersName, String modeName) {
    TrustedPeers servers = TrustedPeers.of(reader.identities(peersName));
    if (!servers.anyFromCa() && mode == TlsMode.PLAINTEXT) {
      reader.problem(peersName + " applies only with " + modeName + "=tls or mtls");
    }
    return new ChannelTlsConfig(mode, servers);
  }

  /** Fields of the start-up log line, their names after {@code prefix}. */
  public Fields fields(String prefix) {
    return new Fields().add(prefix + "tls_mode", mode.text())
        .add(prefix + "trusted_peers", mode == TlsMode.PLAINTEXT ? "n/a" : servers.describe());
  }

  /** {@link #fields} as {@code key=value key=value}. */
  public String describe(String prefix) {
    return fields(prefix).toString();
  }
}
