package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderStatus;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Forty buyers race through the gateway for the last K units of one item, K = 5 and K = 1: exactly K
 * orders are placed, the others are OUT_OF_STOCK, and the stock holds exactly K. The services run the
 * production wiring in-process, on the strict launcher with injected TransactionConflicts, a fresh stack
 * per race (its limits at their first value, 20, so 40 buyers are twice that); buyers ask again with the
 * same request_id after ABORTED, after their own deadline and after a refusal's RetryInfo, as a careful
 * client does ({@link StockRace#patientBuyer}).
 *
 * <p>Whether the burst is served without a refusal for load depends on how fast the machine frees the first
 * 20 slots (a call waits at most 10 s), so it is judged where time is controlled: RouteLimiterTest's cold
 * burst at the defaults, on a stepped clock, and the benchmark's (§12). Here a refusal may come on a loaded
 * machine, and must be honest: RESOURCE_EXHAUSTED with a RetryInfo, after which the buyer still gets its
 * answer.
 * ({@code StockRoundsIT} runs the same race against the jars while it kills instances.)
 */
@Tag("integration")
class GatewayStockRaceTest {

  private static final int BUYERS = 40;

  private StockRace stack;
  /** Every answer other than an order a buyer got, retried or not. */
  private final Queue<StatusRuntimeException> answers = new ConcurrentLinkedQueue<>();

  @BeforeEach
  void start() throws Exception {
    stack = StockRace.start(table -> table.conflictRate(0.2));
  }

  @AfterEach
  void stop() throws Exception {
    if (stack != null) {
      stack.close();
    }
  }

  @ParameterizedTest(name = "K = {0}")
  @ValueSource(ints = {5, 1})
  void fortyBuyers_forTheLastKUnits_throughTheGateway_placeExactlyKOrders(int units) throws Exception {
    String product = stack.product(units);

    List<Object> outcomes = stack.race(product, BUYERS, stack.patientBuyer(answers));

    assertThat(outcomes).filteredOn(o -> o instanceof Order).hasSize(units)
        .allSatisfy(o -> assertThat(((Order) o).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED));
    assertThat(outcomes).filteredOn(o -> !(o instanceof Order)).hasSize(BUYERS - units).allSatisfy(o ->
        assertThat(Status.fromThrowable((Throwable) o).getCode()).as(String.valueOf(o)).isEqualTo(Status.Code.FAILED_PRECONDITION));
    StockRace.assertThrottlesCarryRetryInfo(answers);
    ProductInventory stock = stack.stockOf(product);
    assertThat(stock.getReserved()).isEqualTo(units);
    assertThat(stock.getAvailable()).isZero();
  }
}
