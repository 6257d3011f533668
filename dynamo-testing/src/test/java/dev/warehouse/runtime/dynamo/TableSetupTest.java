package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveStatus;

/** The start-up's table set-up, against moto through a proxy that delays what the test says. */
@Tag("integration")
class TableSetupTest {

  private static final Duration CALL_TIMEOUT = Duration.ofMillis(500);

  @Test
  void callsThatTimeOut_areAskedAgain_andACreateAppliedLate_stillLeavesOneActiveTable() {
    String table = TestServices.uniqueTableName();
    try (DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint());
         DynamoDbAsyncClient dynamo = client(table, proxy)) {
      proxy.delay("DescribeTable", Duration.ofSeconds(1), 1);
      proxy.answerLate("CreateTable", Duration.ofSeconds(1), 1); // created while its caller has given up

      TableSetup.ensureTable(dynamo, table, Duration.ofSeconds(30));

      assertThat(proxy.calls("DescribeTable")).isGreaterThanOrEqualTo(2);
      assertThat(dynamo.describeTable(b -> b.tableName(table)).join().table().tableStatus()).isEqualTo(TableStatus.ACTIVE);
      assertThat(dynamo.describeTimeToLive(b -> b.tableName(table)).join().timeToLiveDescription().timeToLiveStatus())
          .as("the create was ours, though its answer was lost").isEqualTo(TimeToLiveStatus.ENABLED);
    }
  }

  @Test
  void pastItsTime_theSetUpFails_withTheLastFailure() {
    String table = TestServices.uniqueTableName();
    try (DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint());
         DynamoDbAsyncClient dynamo = client(table, proxy)) {
      proxy.delay("DescribeTable", Duration.ofSeconds(2), 100);

      assertThatThrownBy(() -> TableSetup.ensureTable(dynamo, table, Duration.ofSeconds(2)))
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(ApiCallTimeoutException.class);
      assertThat(proxy.calls("DescribeTable")).as("asked again before giving up").isGreaterThanOrEqualTo(2);
    }
  }

  private static DynamoDbAsyncClient client(String table, DynamoFaultProxy proxy) {
    return DynamoClients.create(TestServices.config("test", table, proxy.endpoint(), CALL_TIMEOUT), List.of());
  }
}
