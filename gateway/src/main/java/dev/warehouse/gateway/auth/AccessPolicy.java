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
 *     - reads: warehouse.order.v1.OrderService                  # every method its contract declares a read
 *   customer:                                                  # a method for the caller's own records only:
 *     - method: warehouse.order.v1.OrderService/ListCustomerOrders
 *       scope: customer_id                                       # ... where this field is the caller's (AUTH_SCOPE_CLAIM)
 *     - method: warehouse.order.v1.OrderService/UpdateOrderStatus
 *       scope: customer_id
 *       only: {status: ORDER_STATUS_CANCELLED}                   # ... and with these request values only
 * identities:                  # client-certificate identity (URI SAN): its roles
 *   spiffe://warehouse.local/client: [admin]
 * quotas:                      # what each caller may send ({@link QuotaPolicy}); none without the section
 *   default: {rate: 50, burst: 100, concurrency: 20}
 * </pre>
 *
 * A scope names a field of the method's declared route: one its partition key is built from, which the gateway
 * compares with the caller's claim, or one of its {@code owner_fields}, which the owning service checks against the
 * item it reads ({@link dev.warehouse.runtime.scope.CallerScope}); {@link #requireScopable} refuses any other.
 *
 * A read rule grants the methods whose contract says {@code option idempotency_level = NO_SIDE_EFFECTS}, so a
 * read added to the contract reaches a read-only role without a line here; it grants nothing until
 * {@link #servedBy} has read the contracts.
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
  private final Map<String, List<ScopedRule>> scopedByRole;
  private final Map<String, Set<String>> readsByRole;
  private final Map<String, Set<String>> rolesByIdentity;
  private final QuotaPolicy quotas;

  /**
   * A method a role may call for its own records only: where {@code field} is the caller's, and the request's
   * {@code only} fields hold the values given (an enum by its value name).
   */
  public record ScopedRule(String method, String field, Map<String, String> only) {
    public ScopedRule {
      only = Map.copyOf(only);
    }
  }

  private AccessPolicy(Map<String, Set<String>> rulesByRole, Map<String, List<ScopedRule>> scopedByRole,
      Map<String, Set<String>> readsByRole, Map<String, Set<String>> rolesByIdentity, QuotaPolicy quotas) {
    this.readsByRole = readsByRole;
    this.rulesByRole = rulesByRole;
    this.scopedByRole = scopedByRole;
    this.rolesByIdentity = rolesByIdentity;
    this.quotas = quotas;
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
      throw new IllegalArgumentException("must be a mapping with 'roles' (and optionally 'identities' and 'quotas')");
    }
    for (Object key : top.keySet()) {
      if (!List.of("roles", "identities", "quotas").contains(key)) {
        problems.add("unknown key '" + key + "' (only 'roles', 'identities' and 'quotas')");
      }
    }
    Map<String, Set<String>> rules = new LinkedHashMap<>();
    Map<String, List<ScopedRule>> scoped = new LinkedHashMap<>();
    Map<String, Set<String>> reads = new LinkedHashMap<>();
    if (top.get("roles") instanceof Map<?, ?> roles) {
      roles.forEach((role, methods) -> {
        if (!(role instanceof String name) || !ROLE.matcher(name).matches()) {
          problems.add("role '" + role + "' must be lower-case letters, digits, '-' or '_'");
          return;
        }
        Set<String> granted = new LinkedHashSet<>();
        List<ScopedRule> own = new ArrayList<>();
        Set<String> readServices = new LinkedHashSet<>();
        for (Object rule : list(methods)) {
          if (rule instanceof String text && isRule(text)) {
            granted.add(text);
          } else if (rule instanceof Map<?, ?> map && map.containsKey("reads")) {
            if (map.size() == 1 && map.get("reads") instanceof String service && SERVICE.matcher(service).matches()) {
              readServices.add(service);
            } else {
              problems.add("role " + name + ": a read rule is {reads: package.Service} alone, got '" + map + "'");
            }
          } else if (rule instanceof Map<?, ?> map) {
            scopedRule(name, map, problems).ifPresent(own::add);
          } else {
            problems.add("role " + name + ": '" + rule + "' is not package.Service/Method, package.Service/*, "
                + "{reads: package.Service} or {method: package.Service/Method, scope: field}");
          }
        }
        rules.put(name, Set.copyOf(granted));
        scoped.put(name, List.copyOf(own));
        reads.put(name, Set.copyOf(readServices));
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
    QuotaPolicy quotas = QuotaPolicy.parse(top.get("quotas"), problems);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    return new AccessPolicy(Map.copyOf(rules), Map.copyOf(scoped), Map.copyOf(reads), Map.copyOf(identities), quotas);
  }

  /**
   * This policy with each read rule resolved to the methods {@code served}'s contracts declare
   * {@code NO_SIDE_EFFECTS}, after {@link #requireKnown}.
   *
   * @throws IllegalArgumentException as {@link #requireKnown}, and for a read rule whose service declares no read
   */
  public AccessPolicy servedBy(Collection<ServiceDescriptor> served) {
    requireKnown(served);
    Map<String, Set<String>> readMethods = new java.util.HashMap<>();
    for (ServiceDescriptor service : served) {
      if (service.getSchemaDescriptor() instanceof io.grpc.protobuf.ProtoServiceDescriptorSupplier schema) {
        readMethods.put(service.getName(), schema.getServiceDescriptor().getMethods().stream()
            .filter(m -> m.getOptions().getIdempotencyLevel()
                == com.google.protobuf.DescriptorProtos.MethodOptions.IdempotencyLevel.NO_SIDE_EFFECTS)
            .map(m -> service.getName() + "/" + m.getName()).collect(java.util.stream.Collectors.toSet()));
      }
    }
    List<String> empty = new ArrayList<>();
    Map<String, Set<String>> rules = new LinkedHashMap<>();
    rulesByRole.forEach((role, granted) -> {
      Set<String> all = new LinkedHashSet<>(granted);
      for (String service : readsByRole.getOrDefault(role, Set.of())) {
        Set<String> methods = readMethods.getOrDefault(service, Set.of());
        if (methods.isEmpty()) {
          empty.add(role + ": reads of " + service);
        }
        all.addAll(methods);
      }
      rules.put(role, Set.copyOf(all));
    });
    if (!empty.isEmpty()) {
      throw new IllegalArgumentException("the policy's read rules name services whose contracts declare no read: "
          + String.join(", ", empty.stream().sorted().toList()));
    }
    return new AccessPolicy(Map.copyOf(rules), scopedByRole, Map.of(), rolesByIdentity, quotas);
  }

  private static final Pattern FIELD = Pattern.compile("[a-z][a-z0-9_]{0,63}");

  /** {@code {method: package.Service/Method, scope: field, only: {field: value}}}; one method, no wildcard. */
  private static java.util.Optional<ScopedRule> scopedRule(String role, Map<?, ?> map, List<String> problems) {
    for (Object key : map.keySet()) {
      if (!List.of("method", "scope", "only").contains(key)) {
        problems.add("role " + role + ": unknown key '" + key + "' in a scoped rule (only method, scope, only)");
        return java.util.Optional.empty();
      }
    }
    if (!(map.get("method") instanceof String method) || !isRule(method) || method.endsWith("/*")) {
      problems.add("role " + role + ": a scoped rule names one method, package.Service/Method, got '" + map.get("method") + "'");
      return java.util.Optional.empty();
    }
    if (!(map.get("scope") instanceof String field) || !FIELD.matcher(field).matches()) {
      problems.add("role " + role + ": " + method + "'s scope must be a request field name, got '" + map.get("scope") + "'");
      return java.util.Optional.empty();
    }
    Map<String, String> only = new LinkedHashMap<>();
    if (map.get("only") instanceof Map<?, ?> values) {
      values.forEach((name, value) -> {
        if (name instanceof String n && FIELD.matcher(n).matches() && value != null && !(value instanceof Collection<?>)
            && !(value instanceof Map<?, ?>)) {
          only.put(n, String.valueOf(value));
        } else {
          problems.add("role " + role + ": " + method + "'s only must map request fields to one value each");
        }
      });
    } else if (map.containsKey("only")) {
      problems.add("role " + role + ": " + method + "'s only must map request fields to one value each");
    }
    return java.util.Optional.of(new ScopedRule(method, field, only));
  }

  private static Collection<?> list(Object value) {
    return value instanceof Collection<?> c ? c : value == null ? List.of() : List.of(value);
  }

  private static boolean isRule(String text) {
    int slash = text.indexOf('/');
    return slash > 0 && SERVICE.matcher(text.substring(0, slash)).matches()
        && METHOD.matcher(text.substring(slash + 1)).matches();
  }

  /**
   * The scoped rules under which {@code roles} may call {@code fullMethodName}, when no rule of theirs allows it
   * for every record ({@link #allows}): a call is let through when it meets one of them.
   */
  public List<ScopedRule> scopedRules(Set<String> roles, String fullMethodName) {
    List<ScopedRule> found = new ArrayList<>();
    for (String role : roles) {
      for (ScopedRule rule : scopedByRole.getOrDefault(role, List.of())) {
        if (rule.method().equals(fullMethodName)) {
          found.add(rule);
        }
      }
    }
    return found;
  }

  /**
   * Where each scoped rule's field is checked: {@code true} by the gateway (the route's partition key is built from
   * the request's field), {@code false} by the owning service (one of the route's owner fields).
   *
   * @param routes     the declared routes, by full method name
   * @param inputTypes the request message of each method, by full method name
   * @throws IllegalArgumentException naming every scope that is neither, and every {@code only} field the request
   *                                  does not have
   */
  public Map<ScopedRule, Boolean> requireScopable(Map<String, dev.warehouse.runtime.routing.Route> routes,
      Map<String, com.google.protobuf.Descriptors.Descriptor> inputTypes) {
    Map<ScopedRule, Boolean> checkedHere = new java.util.HashMap<>();
    List<String> problems = new ArrayList<>();
    scopedByRole.forEach((role, rules) -> rules.forEach(rule -> {
      dev.warehouse.runtime.routing.Route route = routes.get(rule.method());
      com.google.protobuf.Descriptors.Descriptor request = inputTypes.get(rule.method());
      if (route == null || request == null) {
        problems.add(role + ": " + rule.method() + " has no declared route, so nothing scopes it");
        return;
      }
      boolean inKey = route.partitionKey().variables().contains(rule.field()) && request.findFieldByName(rule.field()) != null;
      if (!inKey && !route.ownerFields().contains(rule.field())) {
        problems.add(role + ": " + rule.method() + "'s scope " + rule.field() + " is neither a field its route's "
            + "partition key (" + route.partitionKey() + ") is built from nor one of its owner fields "
            + route.ownerFields());
        return;
      }
      rule.only().keySet().stream().filter(field -> request.findFieldByName(field) == null).forEach(field ->
          problems.add(role + ": " + rule.method() + "'s only names " + field + ", which its request does not have"));
      checkedHere.put(rule, inKey);
    }));
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("the policy's scopes do not fit the routes: " + String.join("; ", problems));
    }
    return checkedHere;
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

  /** What each caller may send ({@link QuotaPolicy#NONE} when the file sets no quota). */
  public QuotaPolicy quotas() {
    return quotas;
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
    scopedByRole.forEach((role, rules) -> rules.stream().map(ScopedRule::method).filter(rule -> !known.contains(rule))
        .sorted().forEach(rule -> unknown.add(role + ": " + rule)));
    readsByRole.forEach((role, services) -> services.stream().filter(service -> !known.contains(service + "/*"))
        .sorted().forEach(service -> unknown.add(role + ": reads of " + service)));
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("the policy names methods the gateway does not serve: "
          + String.join(", ", unknown.stream().sorted().toList()));
    }
  }
}
