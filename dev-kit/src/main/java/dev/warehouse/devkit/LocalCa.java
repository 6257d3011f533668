package dev.warehouse.devkit;

import io.grpc.util.CertificateUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemWriter;

/**
 * A small certificate authority for local runs and tests: it issues SPIFFE-style workload certificates
 * (the identity is the one URI SAN, {@code spiffe://warehouse.local/<name>}) on EC P-256 keys, written
 * as PEM files that {@code TLS_CERT_FILE}, {@code TLS_KEY_FILE} and {@code TLS_CA_FILE} name (keys as
 * PKCS #8, which grpc-java reads). BouncyCastle builds the certificates; the JDK's own providers make
 * the keys and signatures. Not a production CA: its key sits in a file beside the certificates.
 */
public final class LocalCa {

  public static final String TRUST_DOMAIN = "warehouse.local";

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String SIGNATURE = "SHA256withECDSA";

  private final X509Certificate certificate;
  private final PrivateKey key;

  /** A certificate and its private key. */
  public record Issued(X509Certificate certificate, PrivateKey key) {

    /** Writes both PEM files, each replaced in one step; the key readable by its owner only. */
    public void write(Path certFile, Path keyFile) throws IOException {
      // Key first: a process that reads the pair in between sees a new key beside the old certificate,
      // which it refuses (TransportSecurity checks the pair) until the certificate follows.
      AtomicFiles.write(keyFile, pkcs8Pem(key), true);
      AtomicFiles.write(certFile, pem(certificate), false);
    }
  }

  private LocalCa(X509Certificate certificate, PrivateKey key) {
    this.certificate = certificate;
    this.key = key;
  }

  /** The SPIFFE ID of a workload of this trust domain, e.g. {@code spiffe://warehouse.local/gateway}. */
  public static String spiffeId(String workload) {
    return "spiffe://" + TRUST_DOMAIN + "/" + workload;
  }

  /** A new self-signed CA. */
  public static LocalCa create(String name, Instant notBefore, Instant notAfter) throws GeneralSecurityException {
    KeyPair keys = newKeyPair();
    X500Name subject = new X500Name("CN=" + name + ",O=warehouse (local)");
    try {
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(), Date.from(notBefore),
          Date.from(notAfter), subject, keys.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
          .addExtension(Extension.subjectKeyIdentifier, false, extensions.createSubjectKeyIdentifier(keys.getPublic()));
      return new LocalCa(sign(builder, keys.getPrivate()), keys.getPrivate());
    } catch (IOException e) {
      throw new GeneralSecurityException("cannot encode the CA certificate", e);
    }
  }

  /** The CA written earlier by {@link #write}. */
  public static LocalCa read(Path certFile, Path keyFile) throws IOException, GeneralSecurityException {
    X509Certificate[] certificates = CertificateUtils.getX509Certificates(
        new ByteArrayInputStream(Files.readAllBytes(certFile)));
    if (certificates.length != 1) {
      throw new GeneralSecurityException(certFile + " must hold exactly one certificate");
    }
    PrivateKey key = CertificateUtils.getPrivateKey(new ByteArrayInputStream(Files.readAllBytes(keyFile)));
    return new LocalCa(certificates[0], key);
  }

  public X509Certificate certificate() {
    return certificate;
  }

  public void write(Path certFile, Path keyFile) throws IOException {
    new Issued(certificate, key).write(certFile, keyFile);
  }

  /**
   * Issues a workload certificate.
   *
   * @param workload    the last part of its SPIFFE ID, and its common name
   * @param server      also usable as a server's certificate (else a client's only)
   * @param dnsNames    host names it may serve as (hosts that check names, such as grpcurl, want one)
   * @param ipAddresses IP addresses it may serve as
   */
  public Issued issue(String workload, boolean server, List<String> dnsNames, List<String> ipAddresses,
      Instant notBefore, Instant notAfter) throws GeneralSecurityException {
    KeyPair keys = newKeyPair();
    List<GeneralName> names = new ArrayList<>();
    names.add(new GeneralName(GeneralName.uniformResourceIdentifier, spiffeId(workload)));
    dnsNames.forEach(dns -> names.add(new GeneralName(GeneralName.dNSName, dns)));
    ipAddresses.forEach(ip -> names.add(new GeneralName(GeneralName.iPAddress, ip)));
    KeyPurposeId[] purposes = server
        ? new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}
        : new KeyPurposeId[] {KeyPurposeId.id_kp_clientAuth};
    try {
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(certificate, serial(), Date.from(notBefore),
          Date.from(notAfter), new X500Name("CN=" + workload + ",O=warehouse (local)"), keys.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
          .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purposes))
          .addExtension(Extension.subjectAlternativeName, false,
              new GeneralNames(names.toArray(GeneralName[]::new)))
          .addExtension(Extension.subjectKeyIdentifier, false, extensions.createSubjectKeyIdentifier(keys.getPublic()))
          .addExtension(Extension.authorityKeyIdentifier, false,
              extensions.createAuthorityKeyIdentifier(certificate));
      return new Issued(sign(builder, key), keys.getPrivate());
    } catch (IOException e) {
      throw new GeneralSecurityException("cannot encode the certificate of " + workload, e);
    }
  }

  /** Whether {@code issued} was signed by this CA's key. */
  public boolean signed(X509Certificate issued) {
    try {
      PublicKey caKey = certificate.getPublicKey();
      issued.verify(caKey);
      return true;
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }

  /** Random and positive, as RFC 5280 asks: rotated certificates are told apart by it. */
  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
      throws GeneralSecurityException {
    try {
      return new JcaX509CertificateConverter().getCertificate(builder.build(new JcaContentSignerBuilder(SIGNATURE)
          .build(signer)));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException("cannot sign with " + SIGNATURE, e);
    }
  }

  private static byte[] pem(X509Certificate certificate) throws IOException {
    StringWriter text = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
      writer.writeObject(certificate);
    }
    return text.toString().getBytes(StandardCharsets.US_ASCII);
  }

  /** "BEGIN PRIVATE KEY" (PKCS #8): what grpc-java reads; BouncyCastle's default for EC keys is SEC 1. */
  private static byte[] pkcs8Pem(PrivateKey key) throws IOException {
    StringWriter text = new StringWriter();
    try (PemWriter writer = new PemWriter(text)) {
      writer.writeObject(new JcaPKCS8Generator(key, null).generate());
    }
    return text.toString().getBytes(StandardCharsets.US_ASCII);
  }

}
