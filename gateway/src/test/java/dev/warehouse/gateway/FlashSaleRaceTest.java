package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.PreconditionFailure;
import dev.warehouse.inventory.audit.InventoryAudit;
import dev.warehouse.inventory.store.LowStockShards;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.order.v1.Order;
import dev.warehouse.runtime.testing.AuditChecks;
import dev.warehouse.runtime.testing.MotoServer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A flash sale through the gateway: 200 buyers race for one product whose stock is split over 16
 * buckets, on a launcher that throttles each partition key as DynamoDB does (its limits scaled down to
 * 12 write and 40 read units a second, so that one item, not moto, would be the bottleneck). Every
 * buyer gets a unit while the sum has one, so none is refused; the buyers after the last unit are refused
 * OUT_OF_STOCK with nothing available by the sum; a throttle reaches a buyer only as RESOURCE_EXHAUSTED
 * with a RetryInfo; and the consistency audit agrees afterwards.
 */
@Tag("integration")
class FlashSaleRaceTest {

  private static final int BUYERS = 200;
  private static final int BUCKETS = 16;
  private static final int LATE = 10;

  private static StockRace stack;
  private static final Queue<StatusRuntimeException> answers = new ConcurrentLinkedQueue<>();

  @BeforeAll
  static void start() throws Exception {
    stack = StockRace.start(table -> table.partitionThroughput(12, 40, Duration.ofSeconds(1)));
  }

  @AfterAll
  static void stop() throws Exception {
    if (stack != null) {
      stack.close();
    }
  }

  @Test
  void everyBuyerGetsAUnitWhileTheSumHasOne_andTheLateAreRefusedByTheSum() throws Exception {
    String product = stack.product(BUYERS);
    assertThat(stack.split(product, BUCKETS).getBucketCount()).isEqualTo(BUCKETS);

    List<Object> outcomes = stack.race(product, BUYERS, stack.patientBuyer(answers));

    assertThat(outcomes).as("no buyer is refused while the sum has a unit").allSatisfy(o -> assertThat(o).isInstanceOf(Order.class));
    ProductInventory sold = stack.stockOf(product);
    assertThat(sold.getReserved()).isEqualTo(BUYERS);
    assertThat(sold.getAvailable()).isZero();

    List<Object> late = stack.race(product, LATE, stack.patientBuyer(answers));
    assertThat(late).hasSize(LATE).allSatisfy(o -> {
      assertThat(o).isInstanceOf(StatusRuntimeException.class);
      StatusRuntimeException refused = (StatusRuntimeException) o;
      assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
      assertThat(StatusProto.fromThrowable(refused).getDetailsList()).filteredOn(d -> d.is(PreconditionFailure.class))
          .singleElement().satisfies(d -> assertThat(d.unpack(PreconditionFailure.class).getViolations(0).getDescription())
              .as("the sum of every bucket").isEqualTo("requested 1, available 0"));
    });
    assertThat(stack.stockOf(product).getReserved()).as("no unit sold twice").isEqualTo(BUYERS);

    StockRace.assertThrottlesCarryRetryInfo(answers);
    AuditChecks.Run audit = AuditChecks.run(InventoryAudit.command(LowStockShards.DECLARED),
        AuditChecks.config(stack.table(), MotoServer.endpoint(), Duration.ofSeconds(10)), "--pages-per-second", "500");
    assertThat(audit.status()).as("the consistency audit: %s", audit.output()).isZero();
  }
}
