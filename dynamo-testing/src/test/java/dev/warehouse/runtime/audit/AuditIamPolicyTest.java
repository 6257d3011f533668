package dev.warehouse.runtime.audit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.runtime.dynamo.DynamoClients;
import dev.warehouse.contracttools.IamPolicy;
import dev.warehouse.runtime.testing.IamPolicyEvaluator;
import dev.warehouse.runtime.testing.RecordingInterceptor;
import dev.warehouse.runtime.testing.TestServices;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What an audit's scan sends, recorded against moto, is what the audits' IAM policy
 * ({@code deploy/aws/iam/audit.json}) allows, and all of it; the services' policies allow none of
 * its Scans and batch reads.
 */
@Tag("integration")
class AuditIamPolicyTest {

  @Test
  void everyRequestOfAnAuditsScan_isAllowedByTheAuditsPolicy_andItsScanByNoServicesPolicy() {
    String table = TestServices.uniqueTableName();
    List<Map<String, AttributeValue>> items = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      items.add(Map.of("PK", AttributeValue.fromS("ORDER#O" + i), "SK", AttributeValue.fromS("METADATA"),
          "entity", AttributeValue.fromS("Order")));
    }
    try (DynamoDbAsyncClient setup = TestServices.dynamo(table)) {
      items.forEach(item -> setup.putItem(b -> b.tableName(table).item(item)).join());
    }
    RecordingInterceptor recorder = new RecordingInterceptor();
    List<Map<String, AttributeValue>> scanned = new ArrayList<>();
    try (DynamoDbAsyncClient dynamo = DynamoClients.create(TestServices.config("audit", table), List.of(recorder))) {
      PacedScan scan = new PacedScan(dynamo, table, "audit-policy-test", new PacedScan.Options(2, 1000));
      scan.scan(List.of("Order"), page -> {
        synchronized (scanned) {
          scanned.addAll(page);
        }
      });
      assertThat(scan.batchGet(scanned)).hasSize(items.size());
      assertThat(scan.get(scanned.get(0))).isNotNull();
    }
    List<SdkRequest> sent = recorder.requests();
    assertThat(sent).extracting(r -> r.getClass().getSimpleName().replace("Request", "")).hasSameElementsAs(PacedScan.OPERATIONS);

    IamPolicyEvaluator audit = IamPolicyEvaluator.checkedIn(IamPolicy.AUDIT, table);
    audit.assertAllows(sent);
    audit.assertEveryGrantUsed();
    for (String service : List.of("inventory-service", "order-service")) {
      IamPolicyEvaluator policy = IamPolicyEvaluator.checkedIn(service, table);
      assertThat(sent).as(service).filteredOn(r -> !r.getClass().getSimpleName().equals("GetItemRequest"))
          .isNotEmpty().noneMatch(policy::allows);
    }
  }
}
