package dev.warehouse.inventory;

import static dev.warehouse.runtime.testing.IamRequests.delete;
import static dev.warehouse.runtime.testing.IamRequests.put;
import static dev.warehouse.runtime.testing.IamRequests.query;
import static dev.warehouse.runtime.testing.IamRequests.transaction;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.store.InventoryKeys;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.order.v1.OrderServiceProto;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.contracttools.IamPolicy;
import dev.warehouse.runtime.routing.RouteTable;
import dev.warehouse.runtime.testing.IamPolicyEvaluator;
import dev.warehouse.runtime.testing.RouteConformance;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Requests the inventory-service never sends, forged, are denied by its IAM policy
 * ({@code deploy/aws/iam/inventory-service.json}); the requests it does send are allowed, which
 * {@code RetrievalMapConformanceTest} checks call by call.
 */
class InventoryIamPolicyTest {

  private static final String TABLE = "warehouse";
  private static final IamPolicyEvaluator inventory = IamPolicyEvaluator.checkedIn(InventoryMain.SERVICE_NAME, TABLE);
  private static final IamPolicyEvaluator audit = IamPolicyEvaluator.checkedIn(IamPolicy.AUDIT, TABLE);

  private static final TableKey STOCK = InventoryKeys.stock("P1", "W1");
  private static final TableKey MARKER = LowStockShards.DECLARED.marker("P1", "W1", 3);

  @Test
  void theRequestsOfItsRoutes_areAllowed() {
    // The same shapes as the forged ones below, on the keys and in the form the routes declare.
    assertThat(inventory.allows(GetItemRequest.builder().tableName(TABLE).key(STOCK.attributes()).build())).isTrue();
    assertThat(inventory.allows(query(TABLE, SingleTable.GSI1, SingleTable.GSI1_PK, InventoryKeys.warehouseGsiPk("W1")))).isTrue();
    assertThat(inventory.allows(query(TABLE, null, SingleTable.PK, InventoryKeys.lowStockPk(7)))).isTrue();
    assertThat(inventory.allows(transaction(put(TABLE, STOCK), put(TABLE, MARKER)))).isTrue();
    assertThat(inventory.allows(transaction(put(TABLE, InventoryKeys.stockRequest("P1", "r1")), delete(TABLE, MARKER)))).isTrue();
  }

  @Test
  void aScanOnTheRequestPath_isDenied_andOnlyTheAuditsMayScan() {
    ScanRequest scan = ScanRequest.builder().tableName(TABLE).build();
    assertThat(inventory.denied(scan)).singleElement().asString().contains("dynamodb:Scan");
    assertThat(inventory.allows(scan.toBuilder().indexName(SingleTable.GSI1).build())).isFalse();
    assertThat(audit.allows(scan)).isTrue();
    assertThat(audit.allows(scan.toBuilder().indexName(SingleTable.GSI1).build())).as("the audits scan the table only").isFalse();
    assertThat(audit.allows(PutItemRequest.builder().tableName(TABLE).item(STOCK.attributes()).build()))
        .as("the audits write nothing").isFalse();
  }

  @Test
  void aQueryOnAnUndeclaredIndex_orOnAnotherServicesPartition_isDenied() {
    assertThat(inventory.allows(query(TABLE, "GSI2", "GSI2PK", InventoryKeys.warehouseGsiPk("W1")))).isFalse();
    // GSI1 is the inventory's, but only for its own partitions.
    String customer = RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService"))
        .route("ListCustomerOrders").partitionKey().render("C1");
    assertThat(inventory.allows(query(TABLE, SingleTable.GSI1, SingleTable.GSI1_PK, customer))).isFalse();
    assertThat(inventory.allows(query(TABLE, null, SingleTable.PK, customer))).isFalse();
    // A4 reads GSI1 by warehouse; the base table has no warehouse partitions to read.
    assertThat(inventory.allows(query(TABLE, null, SingleTable.PK, InventoryKeys.warehouseGsiPk("W1")))).isFalse();
  }

  @Test
  void aStockRecordIsWrittenOnlyInsideATransaction_andOnlyMarkersAreDeleted() {
    assertThat(inventory.allows(PutItemRequest.builder().tableName(TABLE).item(STOCK.attributes()).build())).isFalse();
    assertThat(inventory.allows(UpdateItemRequest.builder().tableName(TABLE).key(STOCK.attributes()).build())).isFalse();
    assertThat(inventory.allows(DeleteItemRequest.builder().tableName(TABLE).key(MARKER.attributes()).build())).isFalse();
    assertThat(inventory.denied(transaction(put(TABLE, MARKER), delete(TABLE, STOCK))))
        .singleElement().asString().contains("dynamodb:DeleteItem", STOCK.pk());
    assertThat(inventory.allows(PutItemRequest.builder().tableName(TABLE).item(InventoryKeys.serialItem("SN1").attributes())
        .build())).as("W1 puts a serial item alone").isTrue();
  }

  @Test
  void writingAnOrdersKey_isDenied_evenInsideItsOwnTransaction() {
    TableKey order = RouteConformance.declaredKey(
        RouteTable.of(OrderServiceProto.getDescriptor().findServiceByName("OrderService")).route("GetOrder"),
        Map.of("order_id", "O1"));
    assertThat(inventory.denied(transaction(put(TABLE, STOCK), put(TABLE, order))))
        .singleElement().asString().contains("dynamodb:PutItem", order.pk());
    assertThat(inventory.allows(GetItemRequest.builder().tableName(TABLE).key(order.attributes()).build())).isFalse();
  }

  @Test
  void aBatchWrite_isDenied_evenOfItsOwnKeys() {
    WriteRequest write = WriteRequest.builder().putRequest(PutRequest.builder().item(MARKER.attributes()).build()).build();
    assertThat(inventory.allows(BatchWriteItemRequest.builder().requestItems(Map.of(TABLE, List.of(write))).build())).isFalse();
  }
}
