package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.order.v1.Order;
import dev.warehouse.order.v1.OrderServiceGrpc;
import dev.warehouse.order.v1.OrderStatus;
import dev.warehouse.order.v1.PlaceOrderRequest;
import dev.warehouse.testing.Statuses;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Forty buyers race through the gateway for the last K units of one item, K = 5 and K = 1: exactly K
 * orders are placed, the others are OUT_OF_STOCK, and the stock holds exactly K. The services run the
 * production wiring in-process, on the strict launcher with injected TransactionConflicts; buyers ask
 * again with the same request_id when an answer leaves the outcome open, as a careful client does. The
 * stack is cold for each race, a fresh one (its limits at their first value, 20), and no buyer is refused for
 * load: the burst waits for slots. A stack that has just served a race is not cold: its gateway's adaptive
 * limit has followed the injected conflicts' latency down, and retries arriving into its standing queue are
 * held to the short wait, as they should be; sharing one stack made the second race's claim about that. ({@code StockRoundsIT} runs the same race against the jars while it kills instances.)
 */
@Tag("integration")
class GatewayStockRaceTest {

  private static final int BUYERS = 40;

  private static StockRace stack;
  /** Every OVERLOADED refusal any buyer of the race was answered, retried or not. */
  private static final AtomicInteger overloaded = new AtomicInteger();

  @BeforeEach
  void start() throws Exception {
    overloaded.set(0);
    stack = StockRace.start(table -> table.conflictRate(0.2));
  }

  @AfterEach
  void stop() throws Exception {
    if (stack != null) {
      stack.close();
      stack = null;
    }
  }

  /**
   * One buyer: asked again with the same request_id while the answer leaves the outcome open, and after
   * the delay a refusal names when a concurrency limit refused it (RESOURCE_EXHAUSTED, OVERLOADED).
   */
  private static Object buy(PlaceOrderRequest request) throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (int attempt = 1; ; attempt++) {
      try {
        return OrderServiceGrpc.newBlockingStub(stack.channel).withDeadlineAfter(30, TimeUnit.SECONDS).placeOrder(request);
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        if (Statuses.reason(e).equals("OVERLOADED")) {
          overloaded.incrementAndGet();
        }
        if (code == Status.Code.RESOURCE_EXHAUSTED && System.nanoTime() < giveUp) {
          Thread.sleep(Statuses.retryDelayMs(e)); // the back-off RetryInfo asks of a client, not a wait for the test
          continue;
        }
        boolean open = code == Status.Code.ABORTED || code == Status.Code.UNAVAILABLE
            || code == Status.Code.DEADLINE_EXCEEDED;
        if (!open || attempt >= 5) {
          return e;
        }
      }
    }
  }

  @ParameterizedTest(name = "K = {0}")
  @ValueSource(ints = {5, 1})
  void fortyBuyers_forTheLastKUnits_throughTheGateway_placeExactlyKOrders(int units) throws Exception {
    String product = stack.product(units);

    List<Object> outcomes = stack.race(product, BUYERS, GatewayStockRaceTest::buy);

    assertThat(overloaded).as("buyers refused for load: a burst of %d waits for slots", BUYERS).hasValue(0);
    assertThat(outcomes).filteredOn(o -> o instanceof Order).hasSize(units)
        .allSatisfy(o -> assertThat(((Order) o).getStatus()).isEqualTo(OrderStatus.ORDER_STATUS_PLACED));
    assertThat(outcomes).filteredOn(o -> !(o instanceof Order)).hasSize(BUYERS - units).allSatisfy(o ->
        assertThat(Status.fromThrowable((Throwable) o).getCode()).as(String.valueOf(o)).isEqualTo(Status.Code.FAILED_PRECONDITION));
    ProductInventory stock = stack.stockOf(product);
    assertThat(stock.getReserved()).isEqualTo(units);
    assertThat(stock.getAvailable()).isZero();
  }
}
