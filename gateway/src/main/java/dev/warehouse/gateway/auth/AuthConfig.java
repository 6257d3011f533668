package dev.warehouse.gateway.auth;

import com.nimbusds.jose.JWSAlgorithm;
import dev.warehouse.runtime.env.EnvReader;
import dev.warehouse.runtime.log.Fields;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * How the gateway authenticates and authorizes its callers, read with the rest of its settings.
 *
 * @param mode         {@code AUTH_MODE}: {@code jwt} (default) or {@code none}
 * @param policyFile   {@code AUTH_POLICY_FILE}: the YAML policy of roles and the methods they may call
 * @param jwksFile     {@code AUTH_JWKS_FILE}: the public keys tokens are checked against, as a JWKS file
 * @param jwksUrl      {@code AUTH_JWKS_URL}: or as a JWKS URL (exactly one of the two)
 * @param issuer       {@code AUTH_JWT_ISSUER}: the {@code iss} every token must carry
 * @param audience     {@code AUTH_JWT_AUDIENCE}: the {@code aud} every token must include
 * @param algorithms   {@code AUTH_JWT_ALGORITHMS}: the signature algorithms accepted (asymmetric only)
 * @param rolesClaim   {@code AUTH_ROLES_CLAIM}: the claim that lists the caller's roles
 * @param clockSkew    {@code AUTH_CLOCK_SKEW_SECONDS}: tolerance on {@code exp} and {@code nbf}
 * @param jwksRefresh  {@code AUTH_JWKS_REFRESH_SECONDS}: how often the JWKS is read again (key rotation)
 * @param tokenCacheSize {@code AUTH_TOKEN_CACHE_SIZE}: how many verified tokens are remembered until they
 *     expire or the JWKS changes, so that a caller's next calls skip the signature check (0: none)
 * @param scopeClaim   {@code AUTH_SCOPE_CLAIM}: the token claim a scoped rule compares with the request's field
 *     ({@code sub} by default: a customer's token names the customer)
 * @param requiredType {@code AUTH_JWT_TYPE}: when set, the {@code typ} header every token must carry (RFC 9068's
 *     {@code at+jwt}: an identity provider's ID token, signed by the same key for the same audience, then fails)
 */
public record AuthConfig(
    AuthMode mode,
    Optional<Path> policyFile,
    Optional<Path> jwksFile,
    Optional<URI> jwksUrl,
    String issuer,
    String audience,
    Set<JWSAlgorithm> algorithms,
    String rolesClaim,
    Duration clockSkew,
    Duration jwksRefresh,
    int tokenCacheSize,
    String scopeClaim,
    Optional<String> requiredType) {

  public static final String DEFAULT_ALGORITHMS = "RS256,ES256";
  public static final String DEFAULT_ROLES_CLAIM = "roles";
  public static final String DEFAULT_SCOPE_CLAIM = "sub";
  public static final Duration DEFAULT_CLOCK_SKEW = Duration.ofSeconds(60);
  public static final Duration DEFAULT_JWKS_REFRESH = Duration.ofMinutes(5);
  public static final int DEFAULT_TOKEN_CACHE_SIZE = VerifiedTokens.DEFAULT_CAPACITY;
  /**
   * A token is accepted this long after it expired: more would keep a revoked caller's token working for as long.
   * Five minutes, as Kerberos and most identity providers allow between clocks.
   */
  public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(5);
  /** A bound on the memory it may take: a million tokens of about 1 KB. */
  static final int MAX_TOKEN_CACHE_SIZE = 1_000_000;

  /**
   * Signatures by a private key that the JWKS's public key checks. Never {@code none}, and never an HMAC:
   * a shared secret would have to sit beside the gateway, and any holder could mint tokens.
   */
  public static final Set<JWSAlgorithm> ACCEPTABLE_ALGORITHMS = Set.copyOf(new LinkedHashSet<>(List.of(
      JWSAlgorithm.RS256, JWSAlgorithm.RS384, JWSAlgorithm.RS512,
      JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512,
      JWSAlgorithm.ES256, JWSAlgorithm.ES384, JWSAlgorithm.ES512)));

  /** No authentication: what tests of other things, and the benchmark's forwarding measurements, run with. */
  public static final AuthConfig NONE = new AuthConfig(AuthMode.NONE, Optional.empty(), Optional.empty(),
      Optional.empty(), "", "", Set.of(), DEFAULT_ROLES_CLAIM, DEFAULT_CLOCK_SKEW, DEFAULT_JWKS_REFRESH,
      DEFAULT_TOKEN_CACHE_SIZE);

  public AuthConfig {
    algorithms = Set.copyOf(algorithms);
  }

  /** Without a required {@code typ}. */
  public AuthConfig(AuthMode mode, Optional<Path> policyFile, Optional<Path> jwksFile, Optional<URI> jwksUrl, String issuer,
      String audience, Set<JWSAlgorithm> algorithms, String rolesClaim, Duration clockSkew, Duration jwksRefresh,
      int tokenCacheSize) {
    this(mode, policyFile, jwksFile, jwksUrl, issuer, audience, algorithms, rolesClaim, clockSkew, jwksRefresh,
        tokenCacheSize, DEFAULT_SCOPE_CLAIM, Optional.empty());
  }

  /** Reads the {@code AUTH_*} variables; in {@code jwt} mode the policy, one JWKS source, issuer and audience are required. */
  public static AuthConfig read(EnvReader reader) {
    String modeValue = reader.string("AUTH_MODE", AuthMode.JWT.settingValue());
    AuthMode mode = AuthMode.JWT;
    try {
      mode = AuthMode.valueOf(modeValue.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      reader.problem("AUTH_MODE must be jwt or none, got '" + modeValue + "'");
    }
    Optional<Path> policy = path(reader, "AUTH_POLICY_FILE");
    Optional<Path> jwksFile = path(reader, "AUTH_JWKS_FILE");
    Optional<URI> jwksUrl = reader.uri("AUTH_JWKS_URL");
    jwksUrl.filter(url -> !"https".equalsIgnoreCase(url.getScheme()) && !loopback(url.getHost())).ifPresent(url ->
        reader.problem("AUTH_JWKS_URL must be an https URL (keys fetched over plain http can be swapped on the way, "
            + "and then any token signed by the swapped-in key is accepted); plain http only on loopback, got "
            + url.getScheme() + "://" + url.getHost()));
    String issuer = reader.string("AUTH_JWT_ISSUER", "");
    String audience = reader.string("AUTH_JWT_AUDIENCE", "");
    Set<JWSAlgorithm> algorithms = algorithms(reader);
    String rolesClaim = reader.string("AUTH_ROLES_CLAIM", DEFAULT_ROLES_CLAIM);
    String scopeClaim = reader.string("AUTH_SCOPE_CLAIM", DEFAULT_SCOPE_CLAIM);
    Duration skew = Duration.ofSeconds(reader.nonNegativeLong("AUTH_CLOCK_SKEW_SECONDS", DEFAULT_CLOCK_SKEW.getSeconds()));
    if (skew.compareTo(MAX_CLOCK_SKEW) > 0) {
      reader.problem("AUTH_CLOCK_SKEW_SECONDS must be at most " + MAX_CLOCK_SKEW.getSeconds()
          + " (an expired token is accepted for that long), got " + skew.getSeconds());
      skew = DEFAULT_CLOCK_SKEW;
    }
    String type = reader.string("AUTH_JWT_TYPE", "").trim();
    Optional<String> requiredType = type.isEmpty() ? Optional.empty() : Optional.of(type);
    Duration refresh = Duration.ofSeconds(
        reader.positiveLong("AUTH_JWKS_REFRESH_SECONDS", DEFAULT_JWKS_REFRESH.getSeconds()));
    long cacheSize = reader.nonNegativeLong("AUTH_TOKEN_CACHE_SIZE", DEFAULT_TOKEN_CACHE_SIZE);
    if (cacheSize > MAX_TOKEN_CACHE_SIZE) {
      reader.problem("AUTH_TOKEN_CACHE_SIZE must be at most " + MAX_TOKEN_CACHE_SIZE + ", got " + cacheSize);
      cacheSize = DEFAULT_TOKEN_CACHE_SIZE;
    }
    if (mode == AuthMode.JWT) {
      String off = " (or AUTH_MODE=none to run without authentication)";
      if (policy.isEmpty()) {
        reader.problem("AUTH_MODE=jwt needs AUTH_POLICY_FILE" + off);
      }
      if (jwksFile.isPresent() == jwksUrl.isPresent()) {
        reader.problem("AUTH_MODE=jwt needs exactly one of AUTH_JWKS_FILE and AUTH_JWKS_URL" + off);
      }
      if (issuer.isEmpty()) {
        reader.problem("AUTH_MODE=jwt needs AUTH_JWT_ISSUER" + off);
      }
      if (audience.isEmpty()) {
        reader.problem("AUTH_MODE=jwt needs AUTH_JWT_AUDIENCE" + off);
      }
    }
    return new AuthConfig(mode, policy, jwksFile, jwksUrl, issuer, audience, algorithms, rolesClaim, skew, refresh,
        (int) cacheSize, scopeClaim, requiredType);
  }

  /** A host name that can only mean this machine: {@code localhost}, 127.0.0.0/8 or {@code ::1}, as written. */
  static boolean loopback(String host) {
    String name = host.toLowerCase(Locale.ROOT);
    return name.equals("localhost") || name.matches("127(\\.\\d{1,3}){3}") || name.equals("[::1]") || name.equals("::1");
  }

  private static Optional<Path> path(EnvReader reader, String name) {
    String value = reader.string(name, "");
    return value.isEmpty() ? Optional.empty() : Optional.of(Path.of(value));
  }

  private static Set<JWSAlgorithm> algorithms(EnvReader reader) {
    String value = reader.string("AUTH_JWT_ALGORITHMS", DEFAULT_ALGORITHMS);
    Set<JWSAlgorithm> algorithms = new LinkedHashSet<>();
    List<String> refused = new ArrayList<>();
    for (String name : value.split(",")) {
      JWSAlgorithm algorithm = JWSAlgorithm.parse(name.trim());
      if (ACCEPTABLE_ALGORITHMS.contains(algorithm)) {
        algorithms.add(algorithm);
      } else {
        refused.add(name.trim());
      }
    }
    if (!refused.isEmpty() || algorithms.isEmpty()) {
      reader.problem("AUTH_JWT_ALGORITHMS must list signature algorithms among "
          + ACCEPTABLE_ALGORITHMS.stream().map(JWSAlgorithm::getName).sorted().toList() + ", got '" + value + "'");
      return Set.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256);
    }
    return algorithms;
  }

  /** Fields of the start-up line: the settings, never a key. A JWKS URL is shown without its query or user info. */
  public Fields fields() {
    if (mode == AuthMode.NONE) {
      return new Fields().add("auth_mode", "none");
    }
    String jwks = jwksFile.map(file -> "file:" + file)
        .orElseGet(() -> jwksUrl.map(url -> url.getScheme() + "://" + url.getHost()
            + (url.getPort() < 0 ? "" : ":" + url.getPort()) + (url.getPath() == null ? "" : url.getPath())).orElse("-"));
    return new Fields().add("auth_mode", mode.settingValue())
        .add("auth_policy_file", policyFile.map(Path::toString).orElse("-"))
        .add("auth_jwks", jwks)
        .add("auth_jwt_issuer", issuer)
        .add("auth_jwt_audience", audience)
        .add("auth_jwt_algorithms", String.join(",", algorithms.stream().map(JWSAlgorithm::getName).sorted().toList()))
        .add("auth_roles_claim", rolesClaim)
        .add("auth_scope_claim", scopeClaim)
        .add("auth_clock_skew_s", clockSkew.getSeconds())
        .add("auth_jwks_refresh_s", jwksRefresh.getSeconds())
        .add("auth_jwt_type", requiredType.orElse("any"));
  }

  /** {@link #fields} as {@code key=value key=value}. */
  public String describe() {
    return fields().toString();
  }
}
