package dev.warehouse.gateway.auth;

import io.grpc.Attributes;
import io.grpc.Grpc;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The identity a caller's TLS client certificate carries: its one URI subject alternative name,
 * SPIFFE-style ({@code spiffe://warehouse.local/<name>}). The TLS handshake has already checked the
 * certificate against the trusted CA; a plaintext connection, or one without a client certificate, has
 * no identity, and neither has a certificate with no URI SAN or with several (a SPIFFE X.509-SVID has
 * exactly one).
 */
public final class ClientCertificates {

  private static final int SAN_URI = 6; // GeneralName uniformResourceIdentifier (RFC 5280)

  private ClientCertificates() {}

  /** The identity of the connection a call came on, from its transport attributes. */
  public static Optional<String> identity(Attributes transport) {
    SSLSession session = transport.get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    if (session == null) {
      return Optional.empty();
    }
    Certificate[] chain;
    try {
      chain = session.getPeerCertificates();
    } catch (SSLPeerUnverifiedException noClientCertificate) {
      return Optional.empty();
    }
    if (chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
      return Optional.empty();
    }
    List<String> uris = uriSans(leaf);
    return uris.size() == 1 ? Optional.of(uris.get(0)) : Optional.empty();
  }

  static List<String> uriSans(X509Certificate certificate) {
    List<String> uris = new ArrayList<>();
    try {
      Collection<List<?>> names = certificate.getSubjectAlternativeNames();
      if (names != null) {
        for (List<?> name : names) {
          if (name.size() >= 2 && name.get(0) instanceof Integer type && type == SAN_URI) {
            uris.add(name.get(1).toString());
          }
        }
      }
    } catch (CertificateParsingException unreadable) {
      return List.of();
    }
    return uris;
  }
}
