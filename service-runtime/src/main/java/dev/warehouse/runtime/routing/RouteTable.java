package dev.warehouse.runtime.routing;

import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import dev.warehouse.routing.v1.Consistency;
import dev.warehouse.routing.v1.Operation;
import dev.warehouse.routing.v1.RouteProto;
import dev.warehouse.routing.v1.SortKeyCondition;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The routes of one gRPC service, read from its descriptor. Building it fails when any RPC lacks a
 * complete route, which is what makes a service refuse to start without one.
 */
public final class RouteTable {

  private final String serviceName;
  private final Map<String, Route> byMethod;

  private RouteTable(String serviceName, Map<String, Route> byMethod) {
    this.serviceName = serviceName;
    this.byMethod = byMethod;
  }

  /**
   * Reads the route of every method of {@code service}.
   *
   * @throws IllegalStateException naming every method whose route is missing or incomplete
   */
  public static RouteTable of(ServiceDescriptor service) {
    Map<String, Route> routes = new LinkedHashMap<>();
    List<String> problems = new ArrayList<>();
    for (MethodDescriptor method : service.getMethods()) {
      String fullName = service.getFullName() + "/" + method.getName();
      if (!method.getOptions().hasExtension(RouteProto.route)) {
        problems.add(fullName + " has no (warehouse.routing.v1.route) option");
        continue;
      }
      dev.warehouse.routing.v1.Route declared = method.getOptions().getExtension(RouteProto.route);
      List<String> missing = missingParts(declared);
      if (!missing.isEmpty()) {
        problems.add(fullName + " has an incomplete route: missing " + String.join(", ", missing));
        continue;
      }
      routes.put(method.getName(), toRoute(fullName, declared));
    }
    if (!problems.isEmpty()) {
      throw new IllegalStateException("every RPC must declare its route: " + String.join("; ", problems));
    }
    return new RouteTable(service.getFullName(), Map.copyOf(routes));
  }

  /**
   * The routes of those of {@code services} that declare routes (a gRPC service whose schema is a protobuf service
   * with the route option on its methods); health, reflection and the admin service declare none and are left out.
   *
   * @throws IllegalStateException as {@link #of(ServiceDescriptor)}, for a service that declares routes on some methods
   *                               and not on others
   */
  public static List<Route> declared(Collection<io.grpc.ServiceDescriptor> services) {
    List<Route> routes = new ArrayList<>();
    for (io.grpc.ServiceDescriptor service : services) {
      if (service.getSchemaDescriptor() instanceof io.grpc.protobuf.ProtoServiceDescriptorSupplier schema
          && schema.getServiceDescriptor().getMethods().stream()
              .anyMatch(method -> method.getOptions().hasExtension(RouteProto.route))) {
        routes.addAll(of(schema.getServiceDescriptor()).routes());
      }
    }
    return routes;
  }

  /**
   * The routes of several services one process serves (method names must not repeat), for what is
   * decided per process: its IAM policy, its conformance checks.
   */
  public static RouteTable combined(String name, RouteTable... tables) {
    Map<String, Route> routes = new LinkedHashMap<>();
    for (RouteTable table : tables) {
      table.byMethod.forEach((method, route) -> {
        if (routes.putIfAbsent(method, route) != null) {
          throw new IllegalArgumentException("method " + method + " is in more than one service of " + name);
        }
      });
    }
    return new RouteTable(name, Map.copyOf(routes));
  }

  public String serviceName() {
    return serviceName;
  }

  /** The route of one method, by its simple name. */
  public Route route(String methodName) {
    Route route = byMethod.get(methodName);
    if (route == null) {
      throw new IllegalArgumentException(serviceName + " has no method " + methodName);
    }
    return route;
  }

  public Collection<Route> routes() {
    return byMethod.values();
  }

  private static List<String> missingParts(dev.warehouse.routing.v1.Route r) {
    List<String> missing = new ArrayList<>();
    if (r.getPatternId().isEmpty()) {
      missing.add("pattern_id");
    }
    if (r.getRequest().isEmpty()) {
      missing.add("request");
    }
    if (r.getOperationsCount() == 0 || r.getOperationsList().contains(Operation.OPERATION_UNSPECIFIED)
        || r.getOperationsList().contains(Operation.OPERATION_CONDITION_CHECK_ITEM)) {
      missing.add("operations");
    }
    // A transaction's items are authorized one by one as what they are (the IAM policies are generated
    // from it), so a transacting route says how it writes each key; other routes write no second key.
    boolean transacts = r.getOperationsList().contains(Operation.OPERATION_TRANSACT_WRITE_ITEMS);
    if (transacts && !itemWrites(r.getWritesList())) {
      missing.add("writes (how the transaction writes the main key)");
    }
    if (!transacts && (r.getWritesCount() > 0 || r.getAlsoWritesCount() > 0)) {
      missing.add("operations: OPERATION_TRANSACT_WRITE_ITEMS, for writes and also_writes");
    }
    for (dev.warehouse.routing.v1.ItemKey k : r.getAlsoWritesList()) {
      if (transacts && !itemWrites(k.getWritesList())) {
        missing.add("writes of also_writes " + k.getPartitionKey() + " / " + k.getSortKey());
      }
    }
    if (r.getPartitionKey().isEmpty()) {
      missing.add("partition_key");
    }
    if (r.getSortKey().isEmpty()) {
      missing.add("sort_key");
    }
    if (r.getSortKeyConditionsCount() == 0
        || r.getSortKeyConditionsList().contains(SortKeyCondition.SORT_KEY_CONDITION_UNSPECIFIED)) {
      missing.add("sort_key_conditions");
    }
    if (r.getConsistency() == Consistency.CONSISTENCY_UNSPECIFIED) {
      missing.add("consistency");
    }
    if (r.hasFanOut() && (r.getFanOut().getShardCount() < 1 || r.getFanOut().getShardCount() > Route.FanOut.MAX_SHARDS
        || r.getFanOut().getShardOf().isEmpty() || !r.getPartitionKey().contains("{shard}"))) {
      missing.add("fan_out (1-100 shards, shard_of, and {shard} in partition_key)");
    }
    return missing;
  }

  /** Whether {@code writes} names one or more kinds of transaction item, and nothing else. */
  private static boolean itemWrites(List<Operation> writes) {
    return !writes.isEmpty() && writes.stream().allMatch(op -> op == Operation.OPERATION_PUT_ITEM
        || op == Operation.OPERATION_UPDATE_ITEM || op == Operation.OPERATION_DELETE_ITEM
        || op == Operation.OPERATION_CONDITION_CHECK_ITEM);
  }

  private static Route toRoute(String fullName, dev.warehouse.routing.v1.Route r) {
    return new Route(
        fullName,
        r.getPatternId(),
        r.getRequest(),
        r.getOperationsList(),
        r.getIndex().isEmpty() ? Optional.empty() : Optional.of(r.getIndex()),
        KeyTemplate.parse(r.getPartitionKey()),
        KeyTemplate.parse(r.getSortKey()),
        r.getSortKeyConditionsList(),
        r.getConsistency(),
        r.getExpectedVolume(),
        r.getAlsoWritesList().stream()
            .map(k -> new Route.ItemKey(KeyTemplate.parse(k.getPartitionKey()), KeyTemplate.parse(k.getSortKey()),
                k.getWritesList()))
            .toList(),
        r.getWritesList(),
        r.hasFanOut()
            ? Optional.of(new Route.FanOut(r.getFanOut().getShardCount(), KeyTemplate.parse(r.getFanOut().getShardOf())))
            : Optional.empty(),
        r.getOwnerFieldsList(),
        r.getAlsoReadsList().stream()
            .map(k -> new Route.ItemKey(KeyTemplate.parse(k.getPartitionKey()), KeyTemplate.parse(k.getSortKey()), List.of()))
            .toList(),
        r.getSplitOperationsList());
  }
}
