package dev.warehouse.gateway.admin;

import dev.warehouse.admin.v1.AccessPatternHotKeys;
import dev.warehouse.admin.v1.HotKey;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.admin.v1.UnansweredInstance;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Adds up the ListHotKeys answers of several instances: per service and access pattern, the request
 * counts and rates of the pattern and of each key are summed, and each key's share is its summed
 * count over the pattern's. Space-saving summaries merge so: a sum of estimates is an estimate whose
 * bound is the sum of the bounds. A key in one instance's top list but not another's counts only
 * where it was listed (each instance is asked for its full top list).
 */
final class HotKeysMerge {

  private HotKeysMerge() {}

  static ListHotKeysResponse merge(List<ListHotKeysResponse> answers, List<UnansweredInstance> unanswered, int limit) {
    Map<List<String>, List<AccessPatternHotKeys>> byPattern = new TreeMap<>(
        Comparator.<List<String>, String>comparing(k -> k.get(0)).thenComparing(k -> k.get(1)));
    com.google.protobuf.Duration window = com.google.protobuf.Duration.getDefaultInstance();
    for (ListHotKeysResponse answer : answers) {
      for (AccessPatternHotKeys pattern : answer.getAccessPatternsList()) {
        byPattern.computeIfAbsent(List.of(pattern.getService(), pattern.getPatternId()), k -> new ArrayList<>()).add(pattern);
      }
      if (longer(answer.getWindow(), window)) {
        window = answer.getWindow();
      }
    }
    ListHotKeysResponse.Builder merged = ListHotKeysResponse.newBuilder()
        .setWindow(window)
        .addAllUnansweredInstances(unanswered);
    byPattern.forEach((id, parts) -> merged.addAccessPatterns(mergePattern(parts, limit)));
    return merged.build();
  }

  private static AccessPatternHotKeys mergePattern(List<AccessPatternHotKeys> parts, int limit) {
    long requests = 0;
    double requestsPerSecond = 0;
    Map<String, HotKey.Builder> keys = new HashMap<>();
    for (AccessPatternHotKeys part : parts) {
      requests += part.getRequestCount();
      requestsPerSecond += part.getRequestsPerSecond();
      for (HotKey key : part.getHotKeysList()) {
        keys.merge(key.getPartitionKey(), key.toBuilder(), (a, b) -> a
            .setRequestCount(a.getRequestCount() + b.getRequestCount())
            .setRequestsPerSecond(a.getRequestsPerSecond() + b.getRequestsPerSecond())
            .setConsumedCapacityUnits(a.getConsumedCapacityUnits() + b.getConsumedCapacityUnits())
            .setConsumedCapacityUnitsPerSecond(a.getConsumedCapacityUnitsPerSecond() + b.getConsumedCapacityUnitsPerSecond()));
      }
    }
    long total = requests;
    AccessPatternHotKeys.Builder pattern = AccessPatternHotKeys.newBuilder()
        .setService(parts.get(0).getService())
        .setPatternId(parts.get(0).getPatternId())
        .setRequestCount(requests)
        .setRequestsPerSecond(requestsPerSecond);
    keys.values().stream()
        .sorted(Comparator.comparingLong(HotKey.Builder::getRequestCount).reversed()
            .thenComparing(HotKey.Builder::getPartitionKey))
        .limit(limit)
        .forEach(key -> pattern.addHotKeys(key.setShare(total == 0 ? 0 : Math.min(1.0, (double) key.getRequestCount() / total))));
    return pattern.build();
  }

  private static boolean longer(com.google.protobuf.Duration a, com.google.protobuf.Duration b) {
    return a.getSeconds() > b.getSeconds() || (a.getSeconds() == b.getSeconds() && a.getNanos() > b.getNanos());
  }
}
