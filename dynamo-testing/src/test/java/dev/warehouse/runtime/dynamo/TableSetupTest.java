package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.testing.DynamoFaultProxy;
import dev.warehouse.runtime.testing.DynamoFaultProxy.Fault;
import dev.warehouse.runtime.testing.MotoServer;
import dev.warehouse.runtime.testing.TestServices;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
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

      // Ten call timeouts of time: a loaded machine reports the first timeout late, and a budget of four
      // (2 s) was over before the second call in one run.
      assertThatThrownBy(() -> TableSetup.ensureTable(dynamo, table, Duration.ofSeconds(5)))
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(ApiCallTimeoutException.class);
      assertThat(proxy.calls("DescribeTable")).as("asked again before giving up").isGreaterThanOrEqualTo(2);
    }
  }

  /**
   * A table DynamoDB is still making is asked after every second, not after the SDK waiter's 20: with the start's
   * own two minutes, two CREATING answers cost 40 s before, which this test's bound (15 s) catches.
   */
  @Test
  @Timeout(15)
  void aTableStillBeingMade_isAskedAfterEverySecond() {
    String table = TestServices.uniqueTableName();
    try (DynamoFaultProxy proxy = DynamoFaultProxy.start(MotoServer.endpoint());
         DynamoDbAsyncClient dynamo = client(table, proxy)) {
      TableSetup.ensureTable(dynamo, table, Duration.ofSeconds(30));
      IntSupplier describes = proxy.count("DescribeTable", table);
      proxy.inject("DescribeTable", Fault.TABLE_CREATING, 3);

      TableSetup.ensureTable(dynamo, table, Duration.ofMinutes(2));

      assertThat(describes.getAsInt()).as("the set-up's look, two more while CREATING, then ACTIVE").isEqualTo(4);
    }
  }

  private static DynamoDbAsyncClient client(String table, DynamoFaultProxy proxy) {
    return DynamoClients.create(TestServices.config("test", table, proxy.endpoint(), CALL_TIMEOUT), List.of());
  }
}
