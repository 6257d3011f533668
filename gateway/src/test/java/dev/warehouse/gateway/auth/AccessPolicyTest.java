package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.DescriptorProtos.MethodOptions.IdempotencyLevel;
import com.google.protobuf.Descriptors.MethodDescriptor;
import dev.warehouse.admin.v1.AdminServiceProto;
import dev.warehouse.gateway.GatewayProcess;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The policy language (deny by default, per-service wildcards, strict parsing), and the development
 * policy checked in under deploy/auth: every rule names a method the gateway serves (a typo would deny
 * in silence), and the debugger role is read-only.
 */
class AccessPolicyTest {

  private static final String INVENTORY = "warehouse.inventory.v1.InventoryService";

  @Test
  void denyByDefault_methodAndServiceWildcardRules() {
    AccessPolicy policy = AccessPolicy.parse("""
        roles:
          picker: [warehouse.inventory.v1.InventoryService/AdjustStock]
          admin: [warehouse.inventory.v1.InventoryService/*]
          empty: []
        """);
    assertThat(policy.allows(Set.of("picker"), INVENTORY + "/AdjustStock")).isTrue();
    assertThat(policy.allows(Set.of("picker"), INVENTORY + "/PutSerialItem")).isFalse();
    assertThat(policy.allows(Set.of("admin"), INVENTORY + "/PutSerialItem")).isTrue();
    assertThat(policy.allows(Set.of("admin"), "warehouse.order.v1.OrderService/PlaceOrder")).isFalse();
    assertThat(policy.allows(Set.of("empty", "unknown"), INVENTORY + "/AdjustStock")).isFalse();
    assertThat(policy.allows(Set.of(), INVENTORY + "/AdjustStock")).isFalse();
    assertThat(policy.rolesOf("spiffe://warehouse.local/anyone")).isEmpty();
  }

  @Test
  void malformedPolicies_areRefused_withEveryProblemNamed() {
    assertThatThrownBy(() -> AccessPolicy.parse("""
        roles:
          Picker: [warehouse.inventory.v1.InventoryService/AdjustStock]
          picker: ["*", "InventoryService/AdjustStock", "warehouse.inventory.v1.InventoryService/Adjust*"]
        identities:
          spiffe://warehouse.local/x: [nobody]
        extra: true
        """)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("role 'Picker'")
        .hasMessageContaining("'*' is not")
        .hasMessageContaining("'InventoryService/AdjustStock' is not")
        .hasMessageContaining("'warehouse.inventory.v1.InventoryService/Adjust*' is not")
        .hasMessageContaining("role 'nobody' is not defined")
        .hasMessageContaining("unknown key 'extra'");
    assertThatThrownBy(() -> AccessPolicy.parse("""
        roles:
          picker: [warehouse.inventory.v1.InventoryService/AdjustStock]
          picker: [warehouse.inventory.v1.InventoryService/PutSerialItem]
        """)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("picker");
    assertThatThrownBy(() -> AccessPolicy.parse("!!javax.script.ScriptEngineManager [] ")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aRuleNamingNoServedMethod_isRefused() {
    AccessPolicy typo = AccessPolicy.parse("""
        roles:
          picker: [warehouse.inventory.v1.InventoryService/AdjustStocks, warehouse.inventory.v2.InventoryService/*]
        """);
    assertThatThrownBy(() -> typo.requireKnown(GatewayProcess.servedServices()))
        .hasMessageContaining("picker: warehouse.inventory.v1.InventoryService/AdjustStocks")
        .hasMessageContaining("picker: warehouse.inventory.v2.InventoryService/*");
  }

  @Test
  void theDevelopmentPolicy_namesOnlyServedMethods_andTheRolesThatRunShPrints() throws Exception {
    AccessPolicy policy = AccessPolicy.read(GatewayAuthTest.DEV_POLICY);
    policy.requireKnown(GatewayProcess.servedServices());
    assertThat(policy.roles()).containsExactly("admin", "buyer", "customer", "debugger", "picker", "storefront");
    assertThat(policy.rolesOf("spiffe://warehouse.local/client")).containsExactly("admin");
  }

  @Test
  void aReadRule_grantsTheMethodsTheContractDeclaresReads_onceResolved() {
    AccessPolicy parsed = AccessPolicy.parse("""
        roles:
          auditor: [{reads: warehouse.order.v1.OrderService}]
        """);
    String getOrder = "warehouse.order.v1.OrderService/GetOrder";
    assertThat(parsed.allows(Set.of("auditor"), getOrder)).as("nothing before the contracts are read").isFalse();

    AccessPolicy policy = parsed.servedBy(GatewayProcess.servedServices());

    assertThat(policy.allows(Set.of("auditor"), getOrder)).isTrue();
    assertThat(policy.allows(Set.of("auditor"), "warehouse.order.v1.OrderService/ListStalledOrders")).isTrue();
    assertThat(policy.allows(Set.of("auditor"), "warehouse.order.v1.OrderService/PlaceOrder")).isFalse();
    assertThat(policy.allows(Set.of("auditor"), "warehouse.inventory.v1.InventoryService/GetSerialItem")).isFalse();
  }

  @Test
  void aReadRule_ofAServiceNotServed_orMalformed_orWithoutReads_isRefused() {
    assertThatThrownBy(() -> AccessPolicy.parse("""
        roles:
          auditor: [{reads: warehouse.order.v2.OrderService}]
        """).servedBy(GatewayProcess.servedServices()))
        .hasMessageContaining("auditor: reads of warehouse.order.v2.OrderService");
    assertThatThrownBy(() -> AccessPolicy.parse("""
        roles:
          auditor: [{reads: warehouse.order.v1.OrderService, scope: customer_id}]
        """)).hasMessageContaining("a read rule is {reads: package.Service} alone");
    assertThatThrownBy(() -> AccessPolicy.parse("""
        roles:
          auditor: [{reads: grpc.health.v1.Health}]
        """).servedBy(GatewayProcess.servedServices()))
        .hasMessageContaining("declare no read").hasMessageContaining("auditor: reads of grpc.health.v1.Health");
  }

  @Test
  void theDevelopmentDebugger_readsEverything_andWritesNothing() throws Exception {
    AccessPolicy policy = AccessPolicy.read(GatewayAuthTest.DEV_POLICY).servedBy(GatewayProcess.servedServices());
    Set<String> reads = new HashSet<>();
    Set<String> writes = new HashSet<>();
    for (var service : List.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService"),
        OrderServiceProto.getDescriptor().findServiceByName("OrderService"),
        AdminServiceProto.getDescriptor().findServiceByName("AdminService"))) {
      for (MethodDescriptor method : service.getMethods()) {
        String name = service.getFullName() + "/" + method.getName();
        (method.getOptions().getIdempotencyLevel() == IdempotencyLevel.NO_SIDE_EFFECTS ? reads : writes).add(name);
      }
    }
    assertThat(writes).isNotEmpty();
    assertThat(reads).allMatch(method -> policy.allows(Set.of("debugger"), method), "the debugger may read");
    assertThat(writes).noneMatch(method -> policy.allows(Set.of("debugger"), method));
    assertThat(policy.allows(Set.of("debugger"), "grpc.reflection.v1.ServerReflection/ServerReflectionInfo")).isTrue();
    assertThat(writes).allMatch(method -> policy.allows(Set.of("admin"), method));
  }
}
