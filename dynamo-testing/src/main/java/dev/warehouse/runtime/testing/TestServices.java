package dev.warehouse.runtime.testing;

import dev.warehouse.runtime.admission.AdmissionConfig;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoClients;
import dev.warehouse.runtime.dynamo.TableSetup;
import dev.warehouse.testing.Patience;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/** Configurations and tables for tests against the shared moto server. */
public final class TestServices {

  /** A fixed key, so that test instances of one service accept each other's page tokens. */
  public static final byte[] PAGE_TOKEN_KEY = "test-only-page-token-key-32-byte".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  private TestServices() {}

  /** A fresh table name, so test classes never see each other's items. */
  public static String uniqueTableName() {
    return "test-" + UUID.randomUUID();
  }

  /**
   * A service on free ports, against moto, creating its table at start-up. Its DynamoDB calls may take
   * {@link Patience#STEP}: moto serializes every request, and on a machine busy with builds a table's creation
   * has taken over ten seconds; a test that wants a call to time out sets its own timeout.
   */
  public static StoreServiceConfig config(String serviceName, String tableName) {
    return config(serviceName, tableName, MotoServer.endpoint(), Patience.STEP);
  }

  /**
   * A service on free ports against {@code endpoint} (a fault proxy, say), with its DynamoDB call timeout.
   * It stops without a drain delay: no balancer stands in front of a test's service (tests of the drain
   * set one). Its concurrency limit is fixed far above any test's callers: a race of 40 buyers tests the
   * stock, and must not depend on where earlier tests left an adaptive limit (the tests of admission set
   * their own).
   */
  public static StoreServiceConfig config(String serviceName, String tableName, URI endpoint, Duration dynamoCallTimeout) {
    return new StoreServiceConfig(serviceName, 0, 0, Optional.of(endpoint), StoreServiceConfig.DEFAULT_REGION,
        tableName, true, Optional.of(PAGE_TOKEN_KEY), dynamoCallTimeout, StoreServiceConfig.DEFAULT_DYNAMO_IO_THREADS,
        Duration.ZERO, Duration.ofSeconds(5), StoreServiceConfig.DEFAULT_HOT_KEY_LOG_SHARE)
        .withAdmission(AdmissionConfig.fixed(UNREACHED_LIMIT));
  }

  /** A concurrency limit no test's callers reach. */
  public static final int UNREACHED_LIMIT = 1_000;

  /** A plain client on moto, for tests that set up or inspect data behind a service's back. */
  public static DynamoDbAsyncClient dynamo(String tableName) {
    DynamoDbAsyncClient client = DynamoClients.create(config("test", tableName), List.of());
    TableSetup.ensureTable(client, tableName, Duration.ofMinutes(1));
    return client;
  }
}
