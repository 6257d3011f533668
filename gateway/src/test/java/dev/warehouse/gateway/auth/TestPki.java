package dev.warehouse.gateway.auth;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A throwaway CA for TLS tests (BouncyCastle builds the certificates; the JDK makes the keys). */
final class TestPki {

  private static final AtomicLong SERIALS = new AtomicLong(System.nanoTime());

  /** A certificate with its key and the chain up to (not including) the CA. */
  record Issued(KeyPair keys, X509Certificate certificate) {
    KeyManager[] keyManagers() throws GeneralSecurityException, java.io.IOException {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      char[] password = "test".toCharArray();
      store.setKeyEntry("key", keys.getPrivate(), password, new X509Certificate[] {certificate});
      KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      factory.init(store, password);
      return factory.getKeyManagers();
    }
  }

  private final KeyPair caKeys;
  private final X509Certificate caCertificate;

  TestPki() throws Exception {
    caKeys = keyPair();
    Instant now = Instant.now();
    X500Name name = new X500Name("CN=test CA");
    JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, serial(), Date.from(now.minusSeconds(60)),
        Date.from(now.plus(Duration.ofDays(1))), name, caKeys.getPublic());
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
    builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    caCertificate = sign(builder, caKeys);
  }

  TrustManager[] trustManagers() throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setCertificateEntry("ca", caCertificate);
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    return factory.getTrustManagers();
  }

  /** A server certificate for localhost and 127.0.0.1. */
  Issued server() throws Exception {
    return issue("localhost", List.of(new GeneralName(GeneralName.dNSName, "localhost"),
        new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
  }

  /** A client certificate whose URI SANs are {@code uris} (one: a SPIFFE identity). */
  Issued client(String... uris) throws Exception {
    List<GeneralName> names = new ArrayList<>();
    for (String uri : uris) {
      names.add(new GeneralName(GeneralName.uniformResourceIdentifier, uri));
    }
    return issue("client", names);
  }

  private Issued issue(String commonName, List<GeneralName> names) throws Exception {
    KeyPair keys = keyPair();
    Instant now = Instant.now();
    JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(caCertificate, serial(),
        Date.from(now.minusSeconds(60)), Date.from(now.plus(Duration.ofDays(1))), new X500Name("CN=" + commonName),
        keys.getPublic());
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
    builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
    if (!names.isEmpty()) {
      builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
    }
    return new Issued(keys, sign(builder, caKeys));
  }

  private static X509Certificate sign(JcaX509v3CertificateBuilder builder, KeyPair signer) throws Exception {
    return new JcaX509CertificateConverter().getCertificate(
        builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
  }

  private static KeyPair keyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    return generator.generateKeyPair();
  }

  private static BigInteger serial() {
    return BigInteger.valueOf(SERIALS.incrementAndGet());
  }
}
