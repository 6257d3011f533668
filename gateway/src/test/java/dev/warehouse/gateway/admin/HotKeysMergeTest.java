package dev.warehouse.gateway.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.within;

import com.google.protobuf.Duration;
import dev.warehouse.admin.v1.AccessPatternHotKeys;
import dev.warehouse.admin.v1.HotKey;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.admin.v1.UnansweredInstance;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the gateway adds up the instances' hot keys. */
class HotKeysMergeTest {

  private static HotKey key(String partitionKey, long count, double units) {
    return HotKey.newBuilder().setPartitionKey(partitionKey).setRequestCount(count).setRequestsPerSecond(count / 60.0)
        .setConsumedCapacityUnits(units).setConsumedCapacityUnitsPerSecond(units / 60).build();
  }

  private static ListHotKeysResponse answer(long windowSeconds, AccessPatternHotKeys... patterns) {
    return ListHotKeysResponse.newBuilder().setWindow(Duration.newBuilder().setSeconds(windowSeconds))
        .addAllAccessPatterns(List.of(patterns)).build();
  }

  private static AccessPatternHotKeys pattern(String service, String id, long count, HotKey... keys) {
    return AccessPatternHotKeys.newBuilder().setService(service).setPatternId(id).setRequestCount(count)
        .setRequestsPerSecond(count / 60.0).addAllHotKeys(List.of(keys)).build();
  }

  @Test
  void sumsEachServicesPatterns_overItsInstances_andRecomputesShares() {
    ListHotKeysResponse merged = HotKeysMerge.merge(List.of(
        answer(55, pattern("order-service", "A6", 100, key("ORDER#O1", 60, 30), key("ORDER#O2", 40, 20))),
        answer(58, pattern("order-service", "A6", 100, key("ORDER#O1", 70, 35), key("ORDER#O3", 30, 15)),
            pattern("order-service", "A5", 10, key("CUSTOMER#C1", 10, 5))),
        answer(30, pattern("inventory-service", "A2", 4, key("PRODUCT#P1", 4, 2)))),
        List.of(UnansweredInstance.newBuilder().setService("order-service").setAddress("h:1").setCode("UNAVAILABLE").build()),
        2);
    assertThat(merged.getAccessPatternsList()).extracting(AccessPatternHotKeys::getService, AccessPatternHotKeys::getPatternId,
        AccessPatternHotKeys::getRequestCount)
        .containsExactly(tuple("inventory-service", "A2", 4L), tuple("order-service", "A5", 10L),
            tuple("order-service", "A6", 200L));
    AccessPatternHotKeys a6 = merged.getAccessPatterns(2);
    assertThat(a6.getRequestsPerSecond()).isCloseTo(200 / 60.0, within(1e-9));
    assertThat(a6.getHotKeysList()).extracting(HotKey::getPartitionKey, HotKey::getRequestCount)
        .containsExactly(tuple("ORDER#O1", 130L), tuple("ORDER#O2", 40L));
    assertThat(a6.getHotKeys(0).getShare()).isCloseTo(0.65, within(1e-9));
    assertThat(a6.getHotKeys(0).getConsumedCapacityUnits()).isCloseTo(65, within(1e-9));
    assertThat(merged.getWindow().getSeconds()).as("the longest window").isEqualTo(58);
    assertThat(merged.getUnansweredInstancesList()).extracting(UnansweredInstance::getAddress).containsExactly("h:1");
  }
}
