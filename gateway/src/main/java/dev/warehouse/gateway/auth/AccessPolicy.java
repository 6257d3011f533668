package dev.warehouse.gateway.auth;

import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Who may call what, from a YAML file ({@code AUTH_POLICY_FILE}); deny by default:
 *
 * <pre>
 * roles:                       # role: the methods it may call
 *   debugger:
 *     - warehouse.inventory.v1.InventoryService/GetSerialItem   # one method, package.Service/Method
 *     - grpc.reflection.v1.ServerReflection/*                   # every method of one service
 * identities:                  # client-certificate identity (URI SAN): its roles
 *   spiffe://warehouse.local/client: [admin]
 * </pre>
 *
 * A call is allowed when one of the caller's roles lists its method or its service's wildcard. Nothing
 * else is: no global wildcard, no allow for a role the file does not name. {@link #requireKnown} refuses
 * a rule that names no method the server serves, so that a typo fails at start instead of denying in
 * silence.
 */
public final class AccessPolicy {

  private static final Pattern ROLE = Pattern.compile("[a-z][a-z0-9_-]{0,63}");
  private static final Pattern SERVICE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)+");
  private static final Pattern METHOD = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*|\\*");

  private final Map<String, Set<String>> rulesByRole;
  private final Map<String, Set<String>> rolesByIdentity;

  private AccessPolicy(Map<String, Set<String>> rulesByRole, Map<String, Set<String>> rolesByIdentity) {
    this.rulesByRole = rulesByRole;
    this.rolesByIdentity = rolesByIdentity;
  }

  public static AccessPolicy read(Path file) throws IOException {
    try {
      return parse(Files.readString(file));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("policy " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * @throws IllegalArgumentException naming every problem: unknown keys, malformed role names or rules,
   *                                  an identity given a role that the file does not define
   */
  public static AccessPolicy parse(String yaml) {
    Object document;
    try {
      // SafeConstructor: plain maps, lists and scalars; no tags that build objects. A role written twice
      // is an error, not the last one silently winning.
      LoaderOptions options = new LoaderOptions();
      options.setAllowDuplicateKeys(false);
      document = new Yaml(new SafeConstructor(options)).load(yaml);
    } catch (YAMLException e) {
      throw new IllegalArgumentException("not valid YAML: " + e.getMessage().replaceAll("\\s+", " ").trim());
    }
    List<String> problems = new ArrayList<>();
    if (!(document instanceof Map<?, ?> top)) {
      throw new IllegalArgumentException("must be a mapping with 'roles' (and optionally 'identities')");
    }
    for (Object key : top.keySet()) {
      if (!"roles".equals(key) && !"identities".equals(key)) {
        problems.add("unknown key '" + key + "' (only 'roles' and 'identities')");
      }
    }
    Map<String, Set<String>> rules = new LinkedHashMap<>();
    if (top.get("roles") instanceof Map<?, ?> roles) {
      roles.forEach((role, methods) -> {
        if (!(role instanceof String name) || !ROLE.matcher(name).matches()) {
          problems.add("role '" + role + "' must be lower-case letters, digits, '-' or '_'");
          return;
        }
        Set<String> granted = new LinkedHashSet<>();
        for (Object rule : list(methods)) {
          if (rule instanceof String text && isRule(text)) {
            granted.add(text);
          } else {
            problems.add("role " + name + ": '" + rule + "' is not package.Service/Method or package.Service/*");
          }
        }
        rules.put(name, Set.copyOf(granted));
      });
    } else {
      problems.add("'roles' must map each role to a list of methods");
    }
    Map<String, Set<String>> identities = new LinkedHashMap<>();
    Object identitySection = top.get("identities");
    if (identitySection instanceof Map<?, ?> map) {
      map.forEach((identity, roles) -> {
        Set<String> given = new LinkedHashSet<>();
        for (Object role : list(roles)) {
          if (role instanceof String name && rules.containsKey(name)) {
            given.add(name);
          } else {
            problems.add("identity " + identity + ": role '" + role + "' is not defined under 'roles'");
          }
        }
        identities.put(String.valueOf(identity), Set.copyOf(given));
      });
    } else if (identitySection != null) {
      problems.add("'identities' must map each certificate identity to a list of roles");
    }
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    return new AccessPolicy(Map.copyOf(rules), Map.copyOf(identities));
  }

  private static Collection<?> list(Object value) {
    return value instanceof Collection<?> c ? c : value == null ? List.of() : List.of(value);
  }

  private static boolean isRule(String text) {
    int slash = text.indexOf('/');
    return slash > 0 && SERVICE.matcher(text.substring(0, slash)).matches()
        && METHOD.matcher(text.substring(slash + 1)).matches();
  }

  /** Whether any of {@code roles} may call {@code fullMethodName} ({@code package.Service/Method}). */
  public boolean allows(Set<String> roles, String fullMethodName) {
    String wildcard = MethodDescriptor.extractFullServiceName(fullMethodName) + "/*";
    for (String role : roles) {
      Set<String> rules = rulesByRole.get(role);
      if (rules != null && (rules.contains(fullMethodName) || rules.contains(wildcard))) {
        return true;
      }
    }
    return false;
  }

  /** The roles of a client-certificate identity; none for an identity the policy does not name. */
  public Set<String> rolesOf(String identity) {
    return rolesByIdentity.getOrDefault(identity, Set.of());
  }

  public Set<String> roles() {
    return new TreeSet<>(rulesByRole.keySet());
  }

  /**
   * @throws IllegalArgumentException naming every rule that matches no method of {@code served}
   */
  public void requireKnown(Collection<ServiceDescriptor> served) {
    Set<String> known = new LinkedHashSet<>();
    for (ServiceDescriptor service : served) {
      known.add(service.getName() + "/*");
      for (MethodDescriptor<?, ?> method : service.getMethods()) {
        known.add(method.getFullMethodName());
      }
    }
    List<String> unknown = new ArrayList<>();
    rulesByRole.forEach((role, rules) -> rules.stream().filter(rule -> !known.contains(rule)).sorted()
        .forEach(rule -> unknown.add(role + ": " + rule)));
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("the policy names methods the gateway does not serve: "
          + String.join(", ", unknown.stream().sorted().toList()));
    }
  }
}
