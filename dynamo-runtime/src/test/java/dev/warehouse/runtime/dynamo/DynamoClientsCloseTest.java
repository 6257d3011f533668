package dev.warehouse.runtime.dynamo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warehouse.runtime.config.StoreServiceConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/** Closing the DynamoDB client, as every stop of a service does. */
@Tag("integration")
class DynamoClientsCloseTest {

  @Test
  void aClientThatHasCalled_closesWithoutNettysQuietPeriod_andLeavesNoIoThread() throws Exception {
    // Port 1: nothing listens there, so the call is refused.
    DynamoDbAsyncClient client = DynamoClients.create(StoreServiceConfig.fromEnvironment("s", 0, 0, Map.of(
        "DYNAMODB_ENDPOINT", "http://127.0.0.1:1", "TABLE_NAME", "t", "DYNAMODB_IO_THREADS", "1")), List.of());
    // A call starts the client's I/O thread, which a quiet period then keeps alive.
    assertThatThrownBy(() -> client.describeTable(b -> b.tableName("t")).join()).hasRootCauseInstanceOf(java.net.ConnectException.class);
    List<Thread> before = ioThreads();
    assertThat(before).isNotEmpty();

    long start = System.nanoTime();
    client.close();
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    // Not a speed target: the SDK's own threads could not end before Netty's two-second quiet period had passed.
    assertThat(took).isLessThan(Duration.ofSeconds(2));
    for (Thread thread : before) {
      thread.join(5_000); // its termination is reported from the thread itself, just before it ends
    }
    assertThat(before).noneMatch(Thread::isAlive);
  }

  private static List<Thread> ioThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("aws-java-sdk-NettyEventLoop")).toList();
  }
}
