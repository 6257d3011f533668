package dev.warehouse.inventory;

import static dev.warehouse.inventory.InventoryFixture.id;
import static dev.warehouse.testing.Statuses.assertInvalid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.warehouse.admin.v1.AccessPatternHotKeys;
import dev.warehouse.admin.v1.AdminServiceGrpc;
import dev.warehouse.admin.v1.HotKey;
import dev.warehouse.admin.v1.ListHotKeysRequest;
import dev.warehouse.admin.v1.ListHotKeysResponse;
import dev.warehouse.inventory.v1.GetProductInventoryRequest;
import dev.warehouse.testing.MetricsScrape;
import dev.warehouse.testing.Reflection;
import io.grpc.reflection.v1.ServerReflectionRequest;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Hot keys, end to end in one service: one product takes most of A2's reads; ListHotKeys names it first
 * with its share, and so does the {@code dynamodb_hottest_partition_share} gauge.
 */
@Tag("integration")
class ListHotKeysTest {

  private static final int HOT_READS = 80;
  private static final int OTHER_PRODUCTS = 5;
  private static final int READS_PER_OTHER = 4;

  private static InventoryFixture inventory;
  private static String hot;

  @BeforeAll
  static void start() throws Exception {
    inventory = new InventoryFixture();
    hot = id("P-hot");
    inventory.stock(hot, "W1", 10);
    for (int i = 0; i < OTHER_PRODUCTS; i++) {
      String other = id("P-other");
      inventory.stock(other, "W1", 10);
      for (int j = 0; j < READS_PER_OTHER; j++) {
        read(other);
      }
    }
    for (int i = 0; i < HOT_READS; i++) {
      read(hot);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    inventory.close();
  }

  /** A2, read strongly: the item was just written. */
  private static void read(String productId) {
    inventory.stub().getProductInventory(GetProductInventoryRequest.newBuilder()
        .setProductId(productId).setWarehouseId("W1").setConsistentRead(true).build());
  }

  private static AdminServiceGrpc.AdminServiceBlockingStub admin() {
    return AdminServiceGrpc.newBlockingStub(inventory.channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  @Test
  void listHotKeys_namesTheKeyTakingMostOfAPattern_first() {
    ListHotKeysResponse response = admin().listHotKeys(ListHotKeysRequest.newBuilder().setPatternId("A2").build());
    assertThat(response.getAccessPatternsList()).hasSize(1);
    AccessPatternHotKeys a2 = response.getAccessPatterns(0);
    assertThat(a2.getService()).isEqualTo(InventoryMain.SERVICE_NAME);
    assertThat(a2.getPatternId()).isEqualTo("A2");
    int reads = HOT_READS + OTHER_PRODUCTS * READS_PER_OTHER;
    assertThat(a2.getRequestCount()).isEqualTo(reads);
    assertThat(a2.getHotKeysCount()).isEqualTo(1 + OTHER_PRODUCTS);

    HotKey hottest = a2.getHotKeys(0);
    assertThat(hottest.getPartitionKey()).isEqualTo("PRODUCT#" + hot);
    assertThat(hottest.getRequestCount()).isEqualTo(HOT_READS);
    assertThat(hottest.getShare()).isCloseTo((double) HOT_READS / reads, within(1e-9));
    assertThat(hottest.getRequestsPerSecond()).isPositive();
    assertThat(hottest.getConsumedCapacityUnits()).as("moto reports the capacity of each read").isPositive();
    assertThat(a2.getHotKeys(1).getShare()).isCloseTo((double) READS_PER_OTHER / reads, within(1e-9));
    assertThat(response.hasWindow()).isTrue();
    assertThat(response.getUnansweredInstancesList()).isEmpty();
  }

  @Test
  void listHotKeys_withoutAFilter_listsEveryPatternThatSawRequests_andHonoursTheLimit() {
    ListHotKeysResponse response = admin().listHotKeys(ListHotKeysRequest.newBuilder().setLimit(1).build());
    assertThat(response.getAccessPatternsList()).extracting(AccessPatternHotKeys::getPatternId).contains("A2", "W2");
    assertThat(response.getAccessPatternsList()).allSatisfy(p -> assertThat(p.getHotKeysCount()).isEqualTo(1));
    assertThat(admin().listHotKeys(ListHotKeysRequest.newBuilder().setPatternId("A5").build()).getAccessPatternsList())
        .as("a well-formed pattern id without requests here").isEmpty();
  }

  @Test
  void theGauge_showsTheHottestKeysShare_withoutTheKey() {
    List<String> lines = MetricsScrape.scrape(inventory.process.metricsPort()).lines()
        .filter(l -> l.startsWith("dynamodb_hottest_partition_")).toList();
    double share = (double) HOT_READS / (HOT_READS + OTHER_PRODUCTS * READS_PER_OTHER);
    assertThat(lines).anySatisfy(l -> {
      assertThat(l).startsWith("dynamodb_hottest_partition_share{application=\"inventory-service\",pattern=\"A2\"} ");
      assertThat(Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).isCloseTo(share, within(1e-9));
    });
    assertThat(lines).anySatisfy(l -> assertThat(l)
        .startsWith("dynamodb_hottest_partition_capacity_units_per_second{application=\"inventory-service\",pattern=\"A2\"} "));
    assertThat(lines).as("no key is a label").noneMatch(l -> l.contains(hot) || l.contains("PRODUCT#"));
  }

  @Test
  void listHotKeys_refusesANegativeLimit_andAMalformedPatternId() {
    assertInvalid(() -> admin().listHotKeys(ListHotKeysRequest.newBuilder().setLimit(-1).build()), "limit");
    assertInvalid(() -> admin().listHotKeys(ListHotKeysRequest.newBuilder().setPatternId("a2").build()), "pattern_id");
    assertInvalid(() -> admin().listHotKeys(ListHotKeysRequest.newBuilder().setPatternId("PRODUCT#P1").setLimit(-5).build()),
        "pattern_id", "limit");
  }

  @Test
  void reflection_describesTheAdminService() throws Exception {
    assertThat(Reflection.ask(inventory.channel, ServerReflectionRequest.newBuilder().setListServices("").build())
        .getListServicesResponse().getServiceList()).extracting(s -> s.getName())
        .contains("warehouse.admin.v1.AdminService", "warehouse.inventory.v1.InventoryService");
    assertThat(Reflection.ask(inventory.channel, ServerReflectionRequest.newBuilder()
        .setFileContainingSymbol("warehouse.admin.v1.AdminService").build())
        .getFileDescriptorResponse().getFileDescriptorProtoCount()).isPositive();
  }
}
