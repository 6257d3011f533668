package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.jwk.JWKSet;
import dev.warehouse.devkit.DevTokens;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The development credentials: a public JWKS, one token per role that the gateway accepts, and no private key on disk. */
class DevTokensTest {

  @TempDir
  Path dir;

  @Test
  void writesAPublicJwks_andOneAcceptedTokenPerRole() throws Exception {
    ByteArrayOutputStream output = new ByteArrayOutputStream();
    int status = DevTokens.run(new String[] {dir.toString(), GatewayAuthTest.DEV_POLICY.toString(),
        "--subject", "customer=C4821"}, new PrintStream(output, true, StandardCharsets.UTF_8));
    assertThat(status).as(output.toString(StandardCharsets.UTF_8)).isZero();

    Path jwks = dir.resolve(DevTokens.JWKS_FILE);
    JWKSet keys = JWKSet.load(jwks.toFile());
    assertThat(keys.getKeys()).singleElement().matches(key -> !key.isPrivate(), "public only");
    assertThat(Files.readString(jwks)).doesNotContain("\"d\"");

    AccessPolicy policy = AccessPolicy.read(GatewayAuthTest.DEV_POLICY);
    try (JwksSource source = JwksSource.ofFile(jwks, Duration.ofMinutes(5))) {
      JwtVerifier verifier = new JwtVerifier(source, AuthConfig.ACCEPTABLE_ALGORITHMS, DevTokens.ISSUER,
          DevTokens.AUDIENCE, "roles", AuthConfig.DEFAULT_CLOCK_SKEW, Clock.systemUTC());
      for (String role : policy.roles()) {
        Path file = dir.resolve(role + ".jwt");
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        Caller caller = verifier.verify(BearerToken.read(file));
        // The customer's token names the demo customer: its scope is its sub.
        assertThat(caller.identity()).isEqualTo(role.equals("customer") ? "C4821" : "dev-" + role);
        assertThat(caller.roles()).containsExactly(role);
      }
      // Twelve hours on, they have expired.
      JwtVerifier later = new JwtVerifier(source, AuthConfig.ACCEPTABLE_ALGORITHMS, DevTokens.ISSUER, DevTokens.AUDIENCE,
          "roles", AuthConfig.DEFAULT_CLOCK_SKEW, Clock.fixed(Instant.now().plus(Duration.ofHours(13)), java.time.ZoneOffset.UTC));
      assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> later.verify(BearerToken.read(dir.resolve("admin.jwt")))))
          .hasMessageContaining("expired");
    }
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("jwks.json", "admin.jwt", "buyer.jwt", "customer.jwt", "debugger.jwt", "picker.jwt",
              "storefront.jwt");
    }
  }

  @Test
  void aSecondRun_replacesTheKey_soTheFirstRunsTokensNoLongerVerify() throws Exception {
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    DevTokens.run(new String[] {dir.toString(), GatewayAuthTest.DEV_POLICY.toString()}, quiet);
    String first = BearerToken.read(dir.resolve("admin.jwt"));
    DevTokens.run(new String[] {dir.toString(), GatewayAuthTest.DEV_POLICY.toString()}, quiet);
    try (JwksSource source = JwksSource.ofFile(dir.resolve(DevTokens.JWKS_FILE), Duration.ofMinutes(5))) {
      JwtVerifier verifier = new JwtVerifier(source, AuthConfig.ACCEPTABLE_ALGORITHMS, DevTokens.ISSUER,
          DevTokens.AUDIENCE, "roles", AuthConfig.DEFAULT_CLOCK_SKEW, Clock.systemUTC());
      assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> verifier.verify(first)))
          .hasMessageContaining("does not know");
      assertThat(verifier.verify(BearerToken.read(dir.resolve("admin.jwt"))).roles()).containsExactly("admin");
    }
  }

  @Test
  void badArguments_areUsage() {
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThat(DevTokens.run(new String[] {dir.toString()}, quiet)).isEqualTo(2);
    assertThat(DevTokens.run(new String[] {dir.toString(), "p.yaml", "--hours", "x"}, quiet)).isEqualTo(2);
    assertThat(DevTokens.run(new String[] {dir.toString(), dir.resolve("absent.yaml").toString()}, quiet)).isEqualTo(1);
  }
}
