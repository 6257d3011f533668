package dev.warehouse.gateway.tools;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.warehouse.gateway.auth.AccessPolicy;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.UUID;

/**
 * {@code java -jar gateway.jar dev-tokens DIR POLICY_FILE [--hours N]}: development credentials for
 * {@code ./run.sh}, docker compose and the end-to-end test. It makes a new EC P-256 signing key, writes
 * its public half as {@code DIR/jwks.json} (the gateway's {@code AUTH_JWKS_FILE}), and one token per
 * role of the policy as {@code DIR/<role>.jwt} (owner-only): subject {@code dev-<role>}, issuer
 * {@link #ISSUER}, audience {@link #AUDIENCE}, valid for {@link #DEFAULT_VALIDITY}. The private key is
 * never written anywhere: once the command ends, no one can mint another token for this JWKS, and the
 * next run replaces the key (the gateway picks the new JWKS up within its refresh period).
 */
public final class DevTokens {

  /** The {@code iss} of development tokens: what AUTH_JWT_ISSUER is set to where they are used. */
  public static final String ISSUER = "warehouse-dev";
  /** The {@code aud} of development tokens: what AUTH_JWT_AUDIENCE is set to where they are used. */
  public static final String AUDIENCE = "warehouse-gateway";
  public static final Duration DEFAULT_VALIDITY = Duration.ofHours(12);
  public static final String JWKS_FILE = "jwks.json";

  private DevTokens() {}

  /** Returns the exit status: 0 done, 1 failed, 2 bad arguments. */
  public static int run(String[] args, PrintStream out) {
    List<String> positional = new ArrayList<>();
    Duration validity = DEFAULT_VALIDITY;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--hours") && i + 1 < args.length) {
        try {
          validity = Duration.ofHours(Long.parseLong(args[++i]));
        } catch (NumberFormatException e) {
          return usage(out);
        }
      } else if (!args[i].startsWith("-")) {
        positional.add(args[i]);
      } else {
        return usage(out);
      }
    }
    if (positional.size() != 2 || validity.isNegative() || validity.isZero()) {
      return usage(out);
    }
    try {
      out.println(write(Path.of(positional.get(0)), AccessPolicy.read(Path.of(positional.get(1))), validity,
          Instant.now()));
      return 0;
    } catch (IOException | IllegalArgumentException | JOSEException e) {
      out.println("dev-tokens: failed: " + e.getMessage());
      return 1;
    }
  }

  private static int usage(PrintStream out) {
    out.println("usage: dev-tokens DIR POLICY_FILE [--hours N]");
    return 2;
  }

  /** Does the work of {@link #run}; returns its one-line summary. */
  public static String write(Path dir, AccessPolicy policy, Duration validity, Instant now)
      throws IOException, JOSEException {
    Files.createDirectories(dir);
    ECKey key = new ECKeyGenerator(Curve.P_256)
        .keyID("dev-" + UUID.randomUUID())
        .keyUse(KeyUse.SIGNATURE)
        .algorithm(JWSAlgorithm.ES256)
        .generate();
    // Tokens first, the JWKS last: a gateway that reads the new JWKS can check every new token at once.
    for (String role : policy.roles()) {
      writeAtomically(dir.resolve(role + ".jwt"), token(key, role, now, validity) + "\n", true);
    }
    writeAtomically(dir.resolve(JWKS_FILE), new JWKSet(key.toPublicJWK()).toString() + "\n", false);
    return "dev-tokens: dir=" + dir + " jwks=" + dir.resolve(JWKS_FILE) + " key_id=" + key.getKeyID()
        + " roles=" + String.join(",", policy.roles()) + " expire=" + now.plus(validity);
  }

  static String token(ECKey key, String role, Instant now, Duration validity) throws JOSEException {
    SignedJWT jwt = new SignedJWT(
        new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(key.getKeyID()).type(JOSEObjectType.JWT).build(),
        new JWTClaimsSet.Builder()
            .issuer(ISSUER)
            .audience(AUDIENCE)
            .subject("dev-" + role)
            .claim("roles", List.of(role))
            .issueTime(Date.from(now))
            .notBeforeTime(Date.from(now))
            .expirationTime(Date.from(now.plus(validity)))
            .jwtID(UUID.randomUUID().toString())
            .build());
    jwt.sign(new ECDSASigner(key));
    return jwt.serialize();
  }

  /** Replaces {@code file} in one step, so a reader never sees half of it; a credential is owner-only. */
  private static void writeAtomically(Path file, String content, boolean ownerOnly) throws IOException {
    Path temporary = Files.createTempFile(file.getParent(), "." + file.getFileName(), ".tmp");
    try {
      Files.writeString(temporary, content, StandardCharsets.US_ASCII);
      try {
        Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString(ownerOnly ? "rw-------" : "rw-r--r--"));
      } catch (UnsupportedOperationException notPosix) {
        // not a POSIX file system: the default permissions stand
      }
      Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(temporary);
    }
  }
}
