package dev.warehouse.inventory.tls;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
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
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemWriter;

/**
 * A throwaway CA for TLS tests, issuing certificates as the gateway's {@code certs} command does (its
 * {@code LocalCa} lives in the gateway, which depends on this module): EC P-256, one SPIFFE URI
 * identity {@code spiffe://warehouse.local/<workload>}, {@code localhost} and {@code 127.0.0.1}, usable
 * by servers and clients. Files: {@code ca.pem}, {@code <workload>.pem}, {@code <workload>-key.pem}.
 */
final class TestCa {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path dir;
  private final KeyPair caKeys;
  private final X509Certificate ca;

  TestCa(Path dir) throws Exception {
    this.dir = dir;
    this.caKeys = keyPair();
    X500Name name = new X500Name("CN=test CA,O=warehouse (test)");
    Instant now = Instant.now();
    this.ca = sign(new JcaX509v3CertificateBuilder(name, serial(), Date.from(now.minus(Duration.ofHours(1))),
        Date.from(now.plus(Duration.ofDays(1))), name, caKeys.getPublic())
        .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
        .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign)));
    Files.writeString(caFile(), pem(ca));
  }

  static String spiffeId(String workload) {
    return "spiffe://warehouse.local/" + workload;
  }

  Path caFile() {
    return dir.resolve("ca.pem");
  }

  Path certFile(String workload) {
    return dir.resolve(workload + ".pem");
  }

  Path keyFile(String workload) {
    return dir.resolve(workload + "-key.pem");
  }

  /** Issues {@code workload}'s certificate and key into the directory. */
  TestCa issue(String workload) throws Exception {
    KeyPair keys = keyPair();
    Instant now = Instant.now();
    X509Certificate cert = sign(new JcaX509v3CertificateBuilder(ca, serial(), Date.from(now.minus(Duration.ofMinutes(5))),
        Date.from(now.plus(Duration.ofDays(1))), new X500Name("CN=" + workload), keys.getPublic())
        .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
        .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
        .addExtension(Extension.extendedKeyUsage, false,
            new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
        .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
            new GeneralName(GeneralName.uniformResourceIdentifier, spiffeId(workload)),
            new GeneralName(GeneralName.dNSName, "localhost"),
            new GeneralName(GeneralName.iPAddress, "127.0.0.1")})));
    Files.writeString(certFile(workload), pem(cert));
    StringWriter key = new StringWriter();
    try (PemWriter writer = new PemWriter(key)) {
      writer.writeObject(new JcaPKCS8Generator(keys.getPrivate(), null).generate()); // PKCS #8, as grpc-java reads
    }
    Files.writeString(keyFile(workload), key.toString());
    return this;
  }

  private X509Certificate sign(X509v3CertificateBuilder builder) throws Exception {
    return new JcaX509CertificateConverter().getCertificate(
        builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(caKeys.getPrivate())));
  }

  private static KeyPair keyPair() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }

  private static String pem(X509Certificate certificate) throws IOException {
    StringWriter text = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
      writer.writeObject(certificate);
    }
    return text.toString();
  }
}
