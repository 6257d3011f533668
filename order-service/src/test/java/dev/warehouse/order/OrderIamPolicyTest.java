package dev.warehouse.order;

import static dev.warehouse.runtime.testing.IamRequests.put;
import static dev.warehouse.runtime.testing.IamRequests.query;
import static dev.warehouse.runtime.testing.IamRequests.transaction;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.InventoryServiceProto;
import dev.warehouse.order.store.OrderKeys;
import dev.warehouse.runtime.dynamo.SingleTable;
import dev.warehouse.runtime.dynamo.TableKey;
import dev.warehouse.contracttools.IamPolicy;
import dev.warehouse.runtime.routing.RouteTable;
import dev.warehouse.runtime.testing.IamPolicyEvaluator;
import dev.warehouse.runtime.testing.RouteConformance;
import java.time.LocalDate;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * Requests the order-service never sends, forged, are denied by its IAM policy
 * ({@code deploy/aws/iam/order-service.json}); the requests it does send are allowed, which
 * {@code RetrievalMapConformanceTest} checks call by call.
 */
class OrderIamPolicyTest {

  private static final String TABLE = "warehouse";
  private static final IamPolicyEvaluator orders = IamPolicyEvaluator.checkedIn(OrderMain.SERVICE_NAME, TABLE);
  private static final IamPolicyEvaluator audit = IamPolicyEvaluator.checkedIn(IamPolicy.AUDIT, TABLE);

  /** The stock of a product at a warehouse, keyed as the inventory's route declares it. */
  private static final TableKey STOCK = RouteConformance.declaredKey(
      RouteTable.of(InventoryServiceProto.getDescriptor().findServiceByName("InventoryService")).route("GetProductInventory"),
      Map.of("product_id", "P1", "warehouse_id", "W1"));

  private static final TableKey DIRECT = OrderKeys.direct("O1");
  private static final TableKey CORRIDOR = OrderKeys.corridor("C1", LocalDate.parse("2026-07-26"), "O1");
  private static final TableKey REQUEST = OrderKeys.orderRequest("C1", "r1");

  @Test
  void placingAnOrder_asTheRouteDeclaresIt_isAllowed() {
    assertThat(orders.allows(transaction(put(TABLE, CORRIDOR), put(TABLE, DIRECT), put(TABLE, REQUEST)))).isTrue();
    assertThat(orders.allows(query(TABLE, null, SingleTable.PK, OrderKeys.customerPk("C1")))).isTrue();
  }

  @Test
  void writingAProductKey_isDenied_aloneOrInsideAnOrdersTransaction() {
    assertThat(orders.allows(PutItemRequest.builder().tableName(TABLE).item(STOCK.attributes()).build())).isFalse();
    assertThat(orders.denied(transaction(put(TABLE, CORRIDOR), put(TABLE, DIRECT), put(TABLE, REQUEST), put(TABLE, STOCK))))
        .singleElement().asString().contains("dynamodb:PutItem", STOCK.pk());
    assertThat(orders.allows(GetItemRequest.builder().tableName(TABLE).key(STOCK.attributes()).build()))
        .as("nor read the inventory's items").isFalse();
  }

  @Test
  void aScanOnTheRequestPath_isDenied_andOnlyTheAuditsMayScan() {
    ScanRequest scan = ScanRequest.builder().tableName(TABLE).build();
    assertThat(orders.denied(scan)).singleElement().asString().contains("dynamodb:Scan");
    assertThat(audit.allows(scan)).isTrue();
    assertThat(audit.allows(transaction(put(TABLE, DIRECT)))).as("the audits write nothing").isFalse();
  }

  @Test
  void aQueryOnAnIndexNoRouteOfItsReads_isDenied() {
    // GSI1 is the inventory's second door (A4); no order route reads an index.
    assertThat(orders.allows(query(TABLE, SingleTable.GSI1, SingleTable.GSI1_PK, OrderKeys.customerPk("C1")))).isFalse();
    assertThat(orders.allows(query(TABLE, "GSI2", "GSI2PK", OrderKeys.customerPk("C1")))).isFalse();
  }

  @Test
  void deletingOrCheckingAnOrder_isDenied_asNoRouteDeclaresIt() {
    assertThat(orders.allows(transaction(
        TransactWriteItem.builder().delete(d -> d.tableName(TABLE).key(DIRECT.attributes())).build()))).isFalse();
    assertThat(orders.allows(transaction(put(TABLE, CORRIDOR),
        TransactWriteItem.builder().conditionCheck(c -> c.tableName(TABLE).key(DIRECT.attributes())
            .conditionExpression("attribute_exists(PK)")).build()))).isFalse();
  }
}
