package dev.warehouse.gateway.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.function.UnaryOperator;

/** Keys, JWKS files and tokens for the tests: good ones, and each kind of bad one. */
final class TestTokens {

  static final String ISSUER = "https://issuer.test";
  static final String AUDIENCE = "warehouse-gateway-test";

  private TestTokens() {}

  /** JWT authentication with {@code policy}, keys from the JWKS file {@code jwks}, this class's issuer and audience. */
  static AuthConfig jwtAuth(Path policy, Path jwks) {
    return new AuthConfig(AuthMode.JWT, java.util.Optional.of(policy), java.util.Optional.of(jwks), java.util.Optional.empty(),
        ISSUER, AUDIENCE, AuthConfig.ACCEPTABLE_ALGORITHMS, AuthConfig.DEFAULT_ROLES_CLAIM, AuthConfig.DEFAULT_CLOCK_SKEW,
        AuthConfig.DEFAULT_JWKS_REFRESH, AuthConfig.DEFAULT_TOKEN_CACHE_SIZE);
  }

  static RSAKey rsaKey(String keyId) {
    try {
      return new RSAKeyGenerator(2048).keyID(keyId).generate();
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  static ECKey ecKey(String keyId) {
    try {
      return new ECKeyGenerator(Curve.P_256).keyID(keyId).generate();
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Writes the public halves of {@code keys} as a JWKS file, replacing it in one step (as a rotation would). */
  static void writeJwks(Path file, JWK... keys) throws IOException {
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(temporary, new JWKSet(List.of(keys)).toPublicJWKSet().toString(), StandardCharsets.UTF_8);
    Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Claims a good token carries: our issuer and audience, a subject, roles, valid from a minute ago for ten. */
  static JWTClaimsSet.Builder claims(String subject, Instant now, String... roles) {
    return new JWTClaimsSet.Builder()
        .issuer(ISSUER)
        .audience(AUDIENCE)
        .subject(subject)
        .claim("roles", List.of(roles))
        .issueTime(Date.from(now.minus(Duration.ofMinutes(1))))
        .notBeforeTime(Date.from(now.minus(Duration.ofMinutes(1))))
        .expirationTime(Date.from(now.plus(Duration.ofMinutes(10))));
  }

  static String sign(JWK key, JWTClaimsSet claims) {
    return sign(key, claims, header -> header);
  }

  /** Signs with {@code key} (RS256 for RSA, ES256 for EC), under the key's id unless {@code header} changes it. */
  static String sign(JWK key, JWTClaimsSet claims, UnaryOperator<JWSHeader.Builder> header) {
    try {
      JWSAlgorithm algorithm = key instanceof RSAKey ? JWSAlgorithm.RS256 : JWSAlgorithm.ES256;
      JWSSigner signer = key instanceof RSAKey rsa ? new RSASSASigner(rsa) : new ECDSASigner((ECKey) key);
      SignedJWT jwt = new SignedJWT(
          header.apply(new JWSHeader.Builder(algorithm).keyID(key.getKeyID()).type(JOSEObjectType.JWT)).build(), claims);
      jwt.sign(signer);
      return jwt.serialize();
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  /** An HS256 token: signed with a shared secret, an algorithm the gateway never accepts. */
  static String hmac(String keyId, JWTClaimsSet claims) {
    try {
      SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID(keyId).build(), claims);
      jwt.sign(new MACSigner("a-shared-secret-of-at-least-256-bits!!".getBytes(StandardCharsets.US_ASCII)));
      return jwt.serialize();
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  /** An unsecured token ({@code "alg":"none"}, empty signature), as an attacker would send it. */
  static String unsecured(JWTClaimsSet claims) {
    return Base64URL.encode("{\"alg\":\"none\",\"typ\":\"JWT\"}") + "." + Base64URL.encode(claims.toString()) + ".";
  }

  /** A token whose signature is another key's, under {@code key}'s id: a forgery. */
  static String forged(JWK key, JWTClaimsSet claims) {
    JWK impostor = key instanceof RSAKey ? rsaKey(key.getKeyID()) : ecKey(key.getKeyID());
    return sign(impostor, claims);
  }
}
