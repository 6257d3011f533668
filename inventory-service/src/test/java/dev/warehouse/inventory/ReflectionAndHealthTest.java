package dev.warehouse.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.ExtensionRegistry;
import dev.warehouse.routing.v1.Route;
import dev.warehouse.routing.v1.RouteProto;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import dev.warehouse.testing.Reflection;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** What grpcurl needs with no .proto at hand (reflection), and what balancers ask (health). */
@Tag("integration")
class ReflectionAndHealthTest {

  private static InventoryFixture inventory;

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture();
  }

  @AfterAll
  static void stop() throws Exception {
    inventory.close();
  }

  @Test
  void reflection_listsTheServices() throws Exception {
    ServerReflectionResponse response = reflect(ServerReflectionRequest.newBuilder().setListServices("").build());
    assertThat(response.getListServicesResponse().getServiceList())
        .extracting(s -> s.getName())
        .contains("warehouse.inventory.v1.InventoryService", "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection");
  }

  @Test
  void reflection_describesEachMethod_withItsRoute() throws Exception {
    ServerReflectionResponse response = reflect(ServerReflectionRequest.newBuilder()
        .setFileContainingSymbol("warehouse.inventory.v1.InventoryService").build());
    ExtensionRegistry registry = ExtensionRegistry.newInstance();
    RouteProto.registerAllExtensions(registry);
    FileDescriptorProto file = null;
    for (var bytes : response.getFileDescriptorResponse().getFileDescriptorProtoList()) {
      FileDescriptorProto candidate = FileDescriptorProto.parseFrom(bytes, registry);
      if (candidate.getName().equals("warehouse/inventory/v1/inventory_service.proto")) {
        file = candidate;
      }
    }
    assertThat(file).as("inventory_service.proto served by reflection").isNotNull();
    MethodDescriptorProto a4 = file.getService(0).getMethodList().stream()
        .filter(m -> m.getName().equals("ListWarehouseProducts")).findFirst().orElseThrow();
    Route route = a4.getOptions().getExtension(RouteProto.route);
    assertThat(route.getPatternId()).isEqualTo("A4");
    assertThat(route.getIndex()).isEqualTo("GSI1");
    assertThat(route.getPartitionKey()).isEqualTo("WAREHOUSE#{warehouse_id}");
  }

  @Test
  void health_isServing_forTheServerAndTheService() {
    HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(inventory.channel).withDeadlineAfter(5, TimeUnit.SECONDS);
    assertThat(health.check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
    assertThat(health.check(HealthCheckRequest.newBuilder().setService("warehouse.inventory.v1.InventoryService").build())
        .getStatus()).isEqualTo(ServingStatus.SERVING);
  }

  private static ServerReflectionResponse reflect(ServerReflectionRequest request) throws Exception {
    return Reflection.ask(inventory.channel, request);
  }
}
