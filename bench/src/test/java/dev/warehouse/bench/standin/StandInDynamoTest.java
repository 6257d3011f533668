package dev.warehouse.bench.standin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.bench.data.DataSet;
import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.order.store.OrderKeys;
import dev.warehouse.runtime.dynamo.SingleTable;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/** The stand-in's canned answers must read, through the real AWS SDK, as DynamoDB's would. */
@Tag("integration")
class StandInDynamoTest {

  private static final String TABLE = "standin-test";
  private static StandInDynamo standIn;
  private static DynamoDbAsyncClient dynamo;

  @BeforeAll
  static void start() throws Exception {
    standIn = StandInDynamo.start(TABLE);
    dynamo = DynamoDbAsyncClient.builder().endpointOverride(standIn.endpoint()).region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"))).build();
  }

  @AfterAll
  static void stop() {
    dynamo.close();
    standIn.close();
  }

  @Test
  void getItem_answersWithAnItemOfTheRouteAsked() {
    GetItemResponse serial = get(InventoryKeys.serialItem(DataSet.serial(7)).attributes());
    assertThat(serial.item().get(SingleTable.PK).s()).startsWith("SERIAL#");
    assertThat(serial.consumedCapacity().capacityUnits()).isEqualTo(0.5);
    assertThat(get(InventoryKeys.stock(DataSet.product(3), DataSet.warehouse(1)).attributes()).item().get(SingleTable.SK).s())
        .startsWith("WAREHOUSE#");
    assertThat(get(Map.of(SingleTable.PK, AttributeValue.fromS("ORDER#O-1"), SingleTable.SK, AttributeValue.fromS("METADATA")))
        .item()).containsKey("order_id");
    assertThat(get(Map.of(SingleTable.PK, AttributeValue.fromS("NOTHING#1"), SingleTable.SK, AttributeValue.fromS("X")))
        .hasItem()).isFalse();
  }

  @Test
  void queries_answerAPageOfTheirRoute() {
    QueryResponse warehouses = query(null, "PRODUCT#P-000001");
    assertThat(warehouses.count()).isEqualTo(3);
    assertThat(warehouses.items()).allSatisfy(item -> assertThat(item.get(SingleTable.SK).s()).startsWith("WAREHOUSE#"));

    QueryResponse products = query(SingleTable.GSI1, "WAREHOUSE#W-01");
    assertThat(products.count()).isEqualTo(26);
    assertThat(products.items()).allSatisfy(item -> assertThat(item).containsKey(SingleTable.GSI1_SK));

    QueryResponse orders = query(null, OrderKeys.customerPk("C-1"));
    assertThat(orders.count()).isEqualTo(DataSet.ORDERS_PER_CUSTOMER);
    assertThat(orders.items()).allSatisfy(item -> assertThat(item.get(SingleTable.SK).s()).startsWith("ORDER#"));
  }

  @Test
  void transactionsAndTableChecks_succeed_otherCallsAreRefusedClearly() {
    assertThat(dynamo.describeTable(b -> b.tableName(TABLE)).join().table().tableStatus()).isEqualTo(TableStatus.ACTIVE);
    dynamo.transactWriteItems(b -> b.transactItems(t -> t.put(p -> p.tableName(TABLE)
        .item(Map.of(SingleTable.PK, AttributeValue.fromS("X#1"), SingleTable.SK, AttributeValue.fromS("Y")))))).join();
    assertThatThrownBy(() -> dynamo.scan(b -> b.tableName(TABLE)).join())
        .isInstanceOf(CompletionException.class).cause().isInstanceOf(DynamoDbException.class)
        .hasMessageContaining("no canned answer");
  }

  private static GetItemResponse get(Map<String, AttributeValue> key) {
    return dynamo.getItem(b -> b.tableName(TABLE).key(key).returnConsumedCapacity("TOTAL")).join();
  }

  private static QueryResponse query(String index, String pk) {
    String pkName = index == null ? SingleTable.PK : SingleTable.GSI1_PK;
    return dynamo.query(b -> b.tableName(TABLE).indexName(index).keyConditionExpression("#pk = :pk")
        .expressionAttributeNames(Map.of("#pk", pkName)).expressionAttributeValues(Map.of(":pk", AttributeValue.fromS(pk))))
        .join();
  }
}
