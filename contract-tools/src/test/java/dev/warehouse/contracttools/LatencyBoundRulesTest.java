package dev.warehouse.contracttools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodOptions;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.EmptyProto;
import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.inventory.v1.ReservationServiceProto;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.routing.v1.Route;
import dev.warehouse.routing.v1.RouteProto;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The latency bounds in deploy/prometheus/alerts.yml, between its latency-bounds markers, are the ones the
 * routes declare. When a route's bound changes, this test fails and says how to regenerate them; run with
 * {@code -Dslo.regenerate=true}, it writes them in place.
 */
class LatencyBoundRulesTest {

  static final String REGENERATE = "./mvnw -B -o -q -pl contract-tools -am test -Dtest=LatencyBoundRulesTest "
      + "-Dsurefire.failIfNoSpecifiedTests=false -Dslo.regenerate=true";

  /** Every service that declares routes. */
  static List<ServiceDescriptor> services() {
    return List.of(
        InventoryServiceProto.getDescriptor().findServiceByName("InventoryService"),
        ReservationServiceProto.getDescriptor().findServiceByName("ReservationService"),
        OrderServiceProto.getDescriptor().findServiceByName("OrderService"));
  }

  @Test
  void alertRules_holdTheBoundsTheRoutesDeclare() throws Exception {
    Path file = Path.of(System.getProperty("project.root", "..")).resolve("deploy/prometheus/alerts.yml");
    String rules = Files.readString(file);
    int begin = rules.indexOf(LatencyBoundRules.BEGIN);
    int end = rules.indexOf(LatencyBoundRules.END);
    assertThat(begin).as("alerts.yml lacks the line:%n%s", LatencyBoundRules.BEGIN).isNotNegative();
    assertThat(end).as("alerts.yml lacks the line:%n%s", LatencyBoundRules.END).isGreaterThan(begin);
    String expected = LatencyBoundRules.yaml(services());
    if (Boolean.getBoolean("slo.regenerate")) {
      rules = rules.substring(0, begin + LatencyBoundRules.BEGIN.length()) + expected + rules.substring(end);
      Files.writeString(file, rules);
      end = rules.indexOf(LatencyBoundRules.END);
    }
    assertThat(rules.substring(begin + LatencyBoundRules.BEGIN.length(), end))
        .as("the latency bounds in deploy/prometheus/alerts.yml are out of date with the routes; regenerate with:%n%s",
            REGENERATE)
        .isEqualTo(expected);
  }

  @Test
  void everyRoutedRpc_hasABound_sizedToItsRoundTrips() {
    Map<String, Double> bounds = LatencyBoundRules.bounds(services());
    assertThat(bounds).hasSize(services().stream().mapToInt(s -> s.getMethods().size()).sum());
    // One GetItem is held tighter than a page of a query, and that than the six calls of placing an order.
    assertThat(bounds.get("warehouse.inventory.v1.InventoryService/GetSerialItem"))
        .isLessThan(bounds.get("warehouse.order.v1.OrderService/ListCustomerOrders"));
    assertThat(bounds.get("warehouse.order.v1.OrderService/ListCustomerOrders"))
        .isLessThan(bounds.get("warehouse.order.v1.OrderService/PlaceOrder"));
  }

  @Test
  void eachRule_recordsItsBound_labelledWithTheBucketThatCountsIt() {
    ServiceDescriptor service = service(Route.newBuilder().setPatternId("A1").setLatencyBoundSeconds(0.268435456).build());
    assertThat(LatencyBoundRules.yaml(List.of(service))).isEqualTo("""
              - record: service_method:grpc_server_latency_bound_seconds
                expr: vector(0.268435456)
                labels:
                  service: test.S
                  method: Call
                  le: "0.268435456"
        """);
    assertThat(LatencyBoundRules.le(1.073741824)).isEqualTo("1.073741824");
  }

  @Test
  void aRouteWithoutABound_isRefused_byName() {
    ServiceDescriptor service = service(Route.newBuilder().setPatternId("A1").build());
    assertThatThrownBy(() -> LatencyBoundRules.bounds(List.of(service)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("test.S/Call");
  }

  private static ServiceDescriptor service(Route route) {
    FileDescriptorProto file = FileDescriptorProto.newBuilder()
        .setName("test/latency_bound_test.proto").setPackage("test").setSyntax("proto3")
        .addDependency(EmptyProto.getDescriptor().getName())
        .addService(ServiceDescriptorProto.newBuilder().setName("S").addMethod(MethodDescriptorProto.newBuilder()
            .setName("Call").setInputType(".google.protobuf.Empty").setOutputType(".google.protobuf.Empty")
            .setOptions(MethodOptions.newBuilder().setExtension(RouteProto.route, route))))
        .build();
    try {
      return FileDescriptor.buildFrom(file, new FileDescriptor[] {EmptyProto.getDescriptor()}).findServiceByName("S");
    } catch (com.google.protobuf.Descriptors.DescriptorValidationException e) {
      throw new AssertionError(e);
    }
  }
}
