package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.order.v1.Order;
import dev.warehouse.testing.MetricsScrape;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The stock race of {@link GatewayStockRaceTest} on a launcher that throttles a hot partition key as DynamoDB
 * does, its limits scaled down (12 write and 40 read units a second per key, a quarter second of them held)
 * until the product's one stock item, not moto, is the bottleneck: every hold writes it in a transaction
 * (2 units), and the bucket holds 3, so a hold within 83 ms of another is throttled, as are holds faster than
 * 6 a second. With a second held, a machine too busy to send the 40 holds faster than 6 a second saw no
 * throttle at all, and the race proved nothing about throttles. The units are still sold exactly once, and a
 * throttle reaches a buyer only as RESOURCE_EXHAUSTED with a RetryInfo, after which the buyer asks again; never
 * INTERNAL or UNAVAILABLE.
 */
@Tag("integration")
class ThrottledStockRaceTest {

  private static final int BUYERS = 40;
  private static final int UNITS = 5;

  private static StockRace stack;
  /** Every answer other than an order a buyer got, retried or not. */
  private static final Queue<StatusRuntimeException> answers = new ConcurrentLinkedQueue<>();

  @BeforeAll
  static void start() throws Exception {
    stack = StockRace.start(table -> table.partitionThroughput(12, 40, Duration.ofMillis(250)));
  }

  @AfterAll
  static void stop() throws Exception {
    if (stack != null) {
      stack.close();
    }
  }

  @Test
  void aThrottledHotItem_stillSellsEachUnitOnce_andThrottlesReachBuyersOnlyAsResourceExhaustedWithRetryInfo()
      throws Exception {
    String product = stack.product(UNITS);

    List<Object> outcomes = stack.race(product, BUYERS, stack.patientBuyer(answers));

    assertThat(outcomes).filteredOn(o -> o instanceof Order).hasSize(UNITS);
    assertThat(outcomes).filteredOn(o -> !(o instanceof Order)).hasSize(BUYERS - UNITS).allSatisfy(o ->
        assertThat(Status.fromThrowable((Throwable) o).getCode()).as(String.valueOf(o)).isEqualTo(Status.Code.FAILED_PRECONDITION));
    StockRace.assertThrottlesCarryRetryInfo(answers);
    ProductInventory stock = stack.stockOf(product);
    assertThat(stock.getReserved()).isEqualTo(UNITS);
    assertThat(stock.getAvailable()).isZero();
    assertThat(throttledAttempts(MetricsScrape.scrape(stack.inventory.metricsPort())))
        .as("the launcher throttled the hot item's requests").isPositive();
  }

  /** DynamoDB attempts the inventory-service saw throttled, over every operation and pattern. */
  private static double throttledAttempts(String metrics) {
    Matcher matcher = Pattern.compile("dynamodb_client_request_duration_seconds_count\\{[^}]*outcome=\"throttled\"[^}]*\\} (\\S+)")
        .matcher(metrics);
    double sum = 0;
    while (matcher.find()) {
      sum += Double.parseDouble(matcher.group(1));
    }
    return sum;
  }
}
