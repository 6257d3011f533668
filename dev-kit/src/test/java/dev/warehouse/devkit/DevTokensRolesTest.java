package dev.warehouse.devkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The roles dev-tokens mints a token for: the policy's role names, in its order (DevTokensTest, in the gateway, checks the tokens). */
class DevTokensRolesTest {

  @TempDir
  Path dir;

  @Test
  void rolesAreThePolicysRoleNames_inTheirOrder() throws Exception {
    Path policy = Files.writeString(dir.resolve("policy.yaml"),
        "roles:\n  storefront:\n    - a/B\n  admin:\n    - a/C\n  debugger: []\n");

    assertThat(DevTokens.roles(policy)).containsExactly("storefront", "admin", "debugger");
  }

  @Test
  void aPolicyWithoutRoles_isRefused() throws Exception {
    Path policy = Files.writeString(dir.resolve("policy.yaml"), "peers: {}\n");

    assertThatThrownBy(() -> DevTokens.roles(policy)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no roles");
  }
}
