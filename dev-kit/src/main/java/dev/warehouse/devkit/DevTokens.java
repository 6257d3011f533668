package dev.warehouse.devkit;

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
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code java -jar dev-kit.jar dev-tokens DIR POLICY_FILE [--hours N] [--subject ROLE=SUB ...]}: development credentials for
 * {@code ./run.sh}, docker compose and the end-to-end test. It makes a new EC P-256 signing key, writes
 * its public half as {@code DIR/jwks.json} (the gateway's {@code AUTH_JWKS_FILE}), and one token per
 * role of the policy as {@code DIR/<role>.jwt} (owner-only): subject {@code dev-<role>} (or the one
 * {@code --subject} gives the role: the demo customer's id for the {@code customer} role, whose scope is its sub), issuer
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
    Map<String, String> subjects = new java.util.HashMap<>();
    Duration validity = DEFAULT_VALIDITY;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--subject") && i + 1 < args.length && args[i + 1].indexOf('=') > 0) {
        String given = args[++i];
        subjects.put(given.substring(0, given.indexOf('=')), given.substring(given.indexOf('=') + 1));
      } else if (args[i].equals("--hours") && i + 1 < args.length) {
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
      out.println(write(Path.of(positional.get(0)), roles(Path.of(positional.get(1))), subjects, validity, Instant.now()));
      return 0;
    } catch (IOException | IllegalArgumentException | JOSEException e) {
      out.println("dev-tokens: failed: " + e.getMessage());
      return 1;
    }
  }

  private static int usage(PrintStream out) {
    out.println("usage: dev-tokens DIR POLICY_FILE [--hours N] [--subject ROLE=SUBJECT ...]");
    return 2;
  }

  /**
   * The role names of a policy file (its {@code roles} map's keys). Only the names: the gateway checks the
   * rest of the policy when it reads it.
   */
  public static List<String> roles(Path policyFile) throws IOException {
    Object document = new Yaml().load(Files.readString(policyFile));
    if (document instanceof Map<?, ?> top && top.get("roles") instanceof Map<?, ?> roles && !roles.isEmpty()) {
      return roles.keySet().stream().map(String::valueOf).toList();
    }
    throw new IllegalArgumentException(policyFile + " has no roles");
  }

  /** Each role's token with subject {@code dev-<role>}. */
  public static String write(Path dir, List<String> roles, Duration validity, Instant now)
      throws IOException, JOSEException {
    return write(dir, roles, Map.of(), validity, now);
  }

  /** Does the work of {@link #run}; returns its one-line summary. */
  public static String write(Path dir, List<String> roles, Map<String, String> subjects, Duration validity, Instant now)
      throws IOException, JOSEException {
    Files.createDirectories(dir);
    ECKey key = new ECKeyGenerator(Curve.P_256)
        .keyID("dev-" + UUID.randomUUID())
        .keyUse(KeyUse.SIGNATURE)
        .algorithm(JWSAlgorithm.ES256)
        .generate();
    // Tokens first, the JWKS last: a gateway that reads the new JWKS can check every new token at once.
    for (String role : roles) {
      String subject = subjects.getOrDefault(role, "dev-" + role);
      AtomicFiles.write(dir.resolve(role + ".jwt"), (token(key, role, subject, now, validity) + "\n")
          .getBytes(StandardCharsets.US_ASCII), true);
    }
    AtomicFiles.write(dir.resolve(JWKS_FILE), (new JWKSet(key.toPublicJWK()) + "\n").getBytes(StandardCharsets.US_ASCII), false);
    return "dev-tokens: dir=" + dir + " jwks=" + dir.resolve(JWKS_FILE) + " key_id=" + key.getKeyID()
        + " roles=" + String.join(",", roles) + " expire=" + now.plus(validity);
  }

  static String token(ECKey key, String role, String subject, Instant now, Duration validity) throws JOSEException {
    SignedJWT jwt = new SignedJWT(
        new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(key.getKeyID()).type(JOSEObjectType.JWT).build(),
        new JWTClaimsSet.Builder()
            .issuer(ISSUER)
            .audience(AUDIENCE)
            .subject(subject)
            .claim("roles", List.of(role))
            .issueTime(Date.from(now))
            .notBeforeTime(Date.from(now))
            .expirationTime(Date.from(now.plus(validity)))
            .jwtID(UUID.randomUUID().toString())
            .build());
    jwt.sign(new ECDSASigner(key));
    return jwt.serialize();
  }

}
