package dev.warehouse.runtime.tls;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.ServerCall;
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
 * Who is calling, as its TLS client certificate says: the certificate's one URI SAN, SPIFFE-style
 * ({@code spiffe://warehouse.local/gateway}). The CA verified the certificate during the handshake;
 * {@link PeerIdentityInterceptor} puts the identity into each call's {@link Context}, where whatever
 * authenticates or authorizes a call later reads it ({@link #current()}).
 *
 * @param uri         the identity
 * @param certificate the peer's certificate it came from
 */
public record PeerIdentity(String uri, X509Certificate certificate) {

  /** The caller's identity in a server call's context, when its connection presented a certificate. */
  public static final Context.Key<PeerIdentity> CONTEXT_KEY = Context.key("warehouse.peer-identity");

  private static final int SAN_URI = 6; // GeneralName uniformResourceIdentifier (RFC 5280)

  /** The identity of the caller of the current server call, if its connection presented one. */
  public static Optional<PeerIdentity> current() {
    return Optional.ofNullable(CONTEXT_KEY.get());
  }

  /** The identity that {@code call}'s connection presented, read from its TLS session. */
  public static Optional<PeerIdentity> of(ServerCall<?, ?> call) {
    return peerCertificate(call.getAttributes()).flatMap(PeerIdentity::of);
  }

  /** The certificate's identity: its URI SAN, when it has exactly one (a SPIFFE X.509-SVID has exactly one). */
  public static Optional<PeerIdentity> of(X509Certificate certificate) {
    List<String> uris = uriSans(certificate);
    return uris.size() == 1 ? Optional.of(new PeerIdentity(uris.get(0), certificate)) : Optional.empty();
  }

  /** The verified certificate the peer of a connection presented, from its transport attributes. */
  public static Optional<X509Certificate> peerCertificate(Attributes transport) {
    SSLSession session = transport.get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    if (session == null) {
      return Optional.empty(); // plaintext
    }
    try {
      Certificate[] chain = session.getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? Optional.of(leaf) : Optional.empty();
    } catch (SSLPeerUnverifiedException noClientCertificate) {
      return Optional.empty();
    }
  }

  /** Every URI subject alternative name of {@code certificate}, in order. */
  public static List<String> uriSans(X509Certificate certificate) {
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
      return List.of(); // no identity: refused like a certificate without one
    }
    return uris;
  }
}
