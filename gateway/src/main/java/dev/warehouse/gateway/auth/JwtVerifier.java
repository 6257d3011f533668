package dev.warehouse.gateway.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.proc.JOSEObjectTypeVerifier;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.BadJWSException;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimNames;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import com.nimbusds.jwt.proc.ExpiredJWTException;
import dev.warehouse.runtime.error.UnauthenticatedException;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Checks a bearer token with Nimbus JOSE+JWT, and says who it names. The library checks everything:
 * the signature with a key of the JWKS, the algorithm against the allow-list (an unsecured {@code none}
 * token is never accepted), the issuer exactly, the audience, {@code exp} (required) and {@code nbf}
 * with the clock skew, and that {@code sub} is there. This class only reads the time from its
 * {@link Clock} and names, for the caller, which check failed (each an UNAUTHENTICATED reason):
 *
 * <ul>
 *   <li>{@code TOKEN_MALFORMED}: not a compact JWS JWT, or a {@code typ} other than {@code JWT} or {@code at+jwt}
 *   <li>{@code TOKEN_ALGORITHM_REJECTED}: {@code none}, an encrypted token, or an algorithm not allowed
 *   <li>{@code TOKEN_KEY_UNKNOWN}: no key of the JWKS matches its {@code kid} and algorithm
 *   <li>{@code TOKEN_SIGNATURE_INVALID}: the signature does not verify
 *   <li>{@code TOKEN_EXPIRED}, {@code TOKEN_NOT_YET_VALID}: {@code exp} / {@code nbf}, beyond the skew
 *   <li>{@code TOKEN_ISSUER_REJECTED}, {@code TOKEN_AUDIENCE_REJECTED}, {@code TOKEN_CLAIMS_REJECTED}:
 *       the issuer, the audience, or a required claim missing
 * </ul>
 * The messages never repeat the token or a claim's value. A token that passed is remembered
 * ({@link VerifiedTokens}) until it expires or the key set changes, so a caller's next calls skip the
 * signature check.
 */
public final class JwtVerifier {

  /** Claims every token must carry; {@code sub} names the caller. */
  static final Set<String> REQUIRED_CLAIMS = Set.of(JWTClaimNames.SUBJECT, JWTClaimNames.ISSUER,
      JWTClaimNames.AUDIENCE, JWTClaimNames.EXPIRATION_TIME);

  private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
  private final Set<JWSAlgorithm> algorithms;
  private final String rolesClaim;
  private final Duration clockSkew;
  private final VerifiedTokens verified;
  /** The key set in use now: a verified token is remembered only while it stays the same. */
  private final Supplier<Object> keySet;

  /** With a cache of {@value VerifiedTokens#DEFAULT_CAPACITY} verified tokens. */
  public JwtVerifier(JWKSource<SecurityContext> keys, Set<JWSAlgorithm> algorithms, String issuer, String audience,
      String rolesClaim, Duration clockSkew, Clock clock) {
    this(keys, algorithms, issuer, audience, rolesClaim, clockSkew, clock, VerifiedTokens.DEFAULT_CAPACITY);
  }

  /** @param cachedTokens how many verified tokens to remember (0: verify every call's token) */
  public JwtVerifier(JWKSource<SecurityContext> keys, Set<JWSAlgorithm> algorithms, String issuer, String audience,
      String rolesClaim, Duration clockSkew, Clock clock, int cachedTokens) {
    this(keys, algorithms, issuer, audience, rolesClaim, clockSkew, clock, cachedTokens, Optional.empty());
  }

  /** @param requiredType the {@code typ} every token must carry ({@code at+jwt}), or any of the accepted ones */
  public JwtVerifier(JWKSource<SecurityContext> keys, Set<JWSAlgorithm> algorithms, String issuer, String audience,
      String rolesClaim, Duration clockSkew, Clock clock, int cachedTokens, Optional<String> requiredType) {
    this.algorithms = Set.copyOf(algorithms);
    this.rolesClaim = rolesClaim;
    this.clockSkew = clockSkew;
    this.verified = new VerifiedTokens(cachedTokens, clock);
    // A refreshed JWKS is a new set only when its keys changed; a fixed source never changes.
    this.keySet = keys instanceof JwksSource refreshed ? refreshed::current : () -> keys;
    processor.setJWSTypeVerifier(requiredType.<JOSEObjectTypeVerifier<SecurityContext>>map(JwtVerifier::requireType)
        .orElse(JwtVerifier::verifyType));
    processor.setJWSKeySelector(new JWSVerificationKeySelector<>(this.algorithms, keys));
    processor.setJWTClaimsSetVerifier(new ClaimsVerifier(issuer, audience, clockSkew, clock));
  }

  public static JwtVerifier of(AuthConfig config, JWKSource<SecurityContext> keys, Clock clock) {
    return new JwtVerifier(keys, config.algorithms(), config.issuer(), config.audience(), config.rolesClaim(),
        config.clockSkew(), clock, config.tokenCacheSize(), config.requiredType());
  }

  /**
   * The caller a token names, with the roles its roles claim lists.
   *
   * @throws UnauthenticatedException when the token is not accepted
   */
  public Caller verify(String token) {
    Object keys = keySet.get();
    Caller known = verified.get(token, keys);
    if (known != null) {
      return known;
    }
    JWT jwt;
    try {
      jwt = JWTParser.parse(token);
    } catch (ParseException e) {
      throw new UnauthenticatedException("TOKEN_MALFORMED", "the bearer token is not a well-formed JWT");
    }
    if (!(jwt instanceof SignedJWT signed)) {
      // alg none (a PlainJWT) or an encrypted token: nothing here was signed by a key we trust.
      throw algorithmRejected();
    }
    if (!algorithms.contains(signed.getHeader().getAlgorithm())) {
      throw algorithmRejected();
    }
    JWTClaimsSet claims;
    try {
      claims = processor.process(signed, null);
    } catch (ClaimsRejected e) {
      throw new UnauthenticatedException(e.reason, e.getMessage());
    } catch (TypeRejected e) {
      throw new UnauthenticatedException("TOKEN_MALFORMED", e.getMessage());
    } catch (BadJWSException e) {
      throw new UnauthenticatedException("TOKEN_SIGNATURE_INVALID", "the bearer token's signature does not verify");
    } catch (BadJWTException e) {
      throw new UnauthenticatedException("TOKEN_CLAIMS_REJECTED", "the bearer token's claims were not accepted");
    } catch (BadJOSEException e) {
      // What is left: no key of the JWKS matches the token's key id and algorithm.
      throw new UnauthenticatedException("TOKEN_KEY_UNKNOWN",
          "the bearer token is signed by a key the gateway does not know");
    } catch (JOSEException e) {
      throw new UnauthenticatedException("TOKEN_SIGNATURE_INVALID", "the bearer token's signature could not be verified");
    }
    Map<String, String> strings = new java.util.HashMap<>();
    claims.getClaims().forEach((name, value) -> {
      if (value instanceof String text) {
        strings.put(name, text);
      }
    });
    Caller caller = new Caller(claims.getSubject(), "jwt", roles(claims.getClaim(rolesClaim)), strings);
    verified.put(token, caller, claims.getExpirationTime().toInstant().plus(clockSkew), keys);
    return caller;
  }

  /** How many verified tokens are remembered now. */
  int cachedTokens() {
    return verified.size();
  }

  private UnauthenticatedException algorithmRejected() {
    return new UnauthenticatedException("TOKEN_ALGORITHM_REJECTED", "the bearer token must be signed with one of "
        + algorithms.stream().map(JWSAlgorithm::getName).sorted().toList());
  }

  /** The roles claim: a list of names, or one string of names separated by spaces (as OAuth's {@code scope}). */
  private static Set<String> roles(Object claim) {
    Set<String> roles = new LinkedHashSet<>();
    if (claim instanceof Collection<?> list) {
      list.forEach(role -> {
        if (role instanceof String name && !name.isBlank()) {
          roles.add(name.trim());
        }
      });
    } else if (claim instanceof String names) {
      for (String name : names.trim().split("\\s+")) {
        if (!name.isEmpty()) {
          roles.add(name);
        }
      }
    }
    return roles;
  }

  /**
   * The {@code typ} header: absent, {@code JWT}, or RFC 9068's {@code at+jwt} (identity providers' access
   * tokens). Checked here rather than by the library's default, so that its refusal has its own reason.
   */
  private static void verifyType(JOSEObjectType type, SecurityContext context) throws TypeRejected {
    if (type != null && !ACCEPTED_TYPES.contains(type.getType().toLowerCase(Locale.ROOT))) {
      throw new TypeRejected();
    }
  }

  private static final Set<String> ACCEPTED_TYPES = Set.of("jwt", "at+jwt", "application/at+jwt");

  /** Exactly {@code required} ({@code at+jwt}; RFC 8725's {@code application/} prefix allowed), never absent. */
  private static JOSEObjectTypeVerifier<SecurityContext> requireType(String required) {
    String wanted = required.toLowerCase(Locale.ROOT).replaceFirst("^application/", "");
    return (type, context) -> {
      if (type == null || !type.getType().toLowerCase(Locale.ROOT).replaceFirst("^application/", "").equals(wanted)) {
        throw new TypeRejected("the bearer token's typ header must be " + required);
      }
    };
  }

  private static final class TypeRejected extends BadJOSEException {
    TypeRejected() {
      this("the bearer token's typ header must be JWT or at+jwt");
    }

    TypeRejected(String message) {
      super(message);
    }
  }

  /** A claims check that failed, with its reason; thrown through the library's processor. */
  private static final class ClaimsRejected extends BadJWTException {
    final String reason;

    ClaimsRejected(String reason, String message) {
      super(message);
      this.reason = reason;
    }
  }

  /**
   * The library's claims checks on the injected clock. The library decides; when it refuses, the claims
   * say which check it was, for the reason.
   */
  private static final class ClaimsVerifier extends DefaultJWTClaimsVerifier<SecurityContext> {
    private final Clock clock;
    private final String issuer;
    private final String audience;
    private final Duration skew;

    ClaimsVerifier(String issuer, String audience, Duration skew, Clock clock) {
      super(Set.of(audience), new JWTClaimsSet.Builder().issuer(issuer).build(), REQUIRED_CLAIMS, Set.of());
      setMaxClockSkew(Math.toIntExact(skew.getSeconds()));
      this.clock = clock;
      this.issuer = issuer;
      this.audience = audience;
      this.skew = skew;
    }

    @Override
    protected Date currentTime() {
      return Date.from(clock.instant());
    }

    @Override
    public void verify(JWTClaimsSet claims, SecurityContext context) throws BadJWTException {
      try {
        super.verify(claims, context);
      } catch (ExpiredJWTException e) {
        throw new ClaimsRejected("TOKEN_EXPIRED", "the bearer token has expired");
      } catch (BadJWTException e) {
        Date notBefore = claims.getNotBeforeTime();
        if (notBefore != null && notBefore.toInstant().isAfter(clock.instant().plus(skew))) {
          throw new ClaimsRejected("TOKEN_NOT_YET_VALID", "the bearer token is not valid yet");
        }
        if (!issuer.equals(claims.getIssuer())) {
          throw new ClaimsRejected("TOKEN_ISSUER_REJECTED", "the bearer token is not from the issuer the gateway trusts");
        }
        List<String> audiences = claims.getAudience();
        if (audiences == null || !audiences.contains(audience)) {
          throw new ClaimsRejected("TOKEN_AUDIENCE_REJECTED", "the bearer token is not meant for this gateway");
        }
        throw new ClaimsRejected("TOKEN_CLAIMS_REJECTED",
            "the bearer token lacks a required claim (" + String.join(", ", REQUIRED_CLAIMS.stream().sorted().toList()) + ")");
      }
    }
  }
}
