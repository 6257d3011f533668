package dev.warehouse.runtime.admin;

import dev.warehouse.admin.v1.AccessPatternHotKeys;
import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.HotKey;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.runtime.grpc.UnaryCalls;
import dev.warehouse.runtime.hotkeys.HotKeys;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code warehouse.admin.v1.AdminService} of a service process: what the process observed of its own
 * DynamoDB requests ({@link HotKeys}). Reads no table, so it has no route ({@code GrpcServer.ROUTE_EXEMPT}).
 */
public final class AdminGrpcEndpoint extends AdminServiceGrpc.AdminServiceImplBase {

  private final String serviceName;
  private final HotKeys hotKeys;

  /** @param serviceName the process's name, as the answers name it: "inventory-service" */
  public AdminGrpcEndpoint(String serviceName, HotKeys hotKeys) {
    this.serviceName = serviceName;
    this.hotKeys = hotKeys;
  }

  @Override
  public void listHotKeys(ListHotKeysRequest request, StreamObserver<ListHotKeysResponse> observer) {
    UnaryCalls.reply(observer, () -> {
      HotKeysQuery query = HotKeysQuery.of(request);
      return CompletableFuture.completedFuture(hotKeys.report(query.patternId(), query.limit()));
    }, reports -> toProto(reports, hotKeys.window()));
  }

  private ListHotKeysResponse toProto(List<HotKeys.PatternReport> reports, Duration window) {
    ListHotKeysResponse.Builder response = ListHotKeysResponse.newBuilder().setWindow(toProto(window));
    for (HotKeys.PatternReport report : reports) {
      AccessPatternHotKeys.Builder pattern = response.addAccessPatternsBuilder()
          .setService(serviceName)
          .setPatternId(report.patternId())
          .setRequestCount(report.requests())
          .setRequestsPerSecond(report.requestsPerSecond());
      for (HotKeys.KeyReport key : report.keys()) {
        pattern.addHotKeys(HotKey.newBuilder()
            .setPartitionKey(key.partitionKey())
            .setRequestCount(key.requests())
            .setRequestsPerSecond(key.requestsPerSecond())
            .setShare(key.share())
            .setConsumedCapacityUnits(key.capacityUnits())
            .setConsumedCapacityUnitsPerSecond(key.capacityUnitsPerSecond()));
      }
    }
    return response.build();
  }

  static com.google.protobuf.Duration toProto(Duration duration) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(duration.getSeconds()).setNanos(duration.getNano()).build();
  }
}
