package dev.warehouse.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.warehouse.gateway.GatewayConfig;
import dev.warehouse.gateway.GatewayProcess;
import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The audit lines are written off the call's thread, so at a stop some may still be queued: {@link AuditTrail#drain}
 * writes them out (the gateway's stop calls it once its calls have ended; LocalStackIT shows it under SIGTERM).
 * Here a slow appender on the audit trail's logger holds the writer, so the lines stay queued until the test lets it go.
 */
@Tag("integration")
class AuditDrainTest {

  @Test
  void drain_waitsUntilTheQueuedLinesAreWritten_andSaysWhenTheyAreNot() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<Map<String, Object>> written = Collections.synchronizedList(new ArrayList<>());
    AppenderBase<ILoggingEvent> slowLog = new AppenderBase<>() {
      @Override
      protected void append(ILoggingEvent event) {
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        Map<String, Object> fields = new HashMap<>();
        event.getKeyValuePairs().forEach(pair -> fields.putIfAbsent(pair.key, pair.value));
        written.add(fields);
      }
    };
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    Logger logger = context.getLogger(AuditTrail.class);
    slowLog.setContext(context);
    slowLog.start();
    logger.addAppender(slowLog);
    int nobody;
    try (ServerSocket unused = new ServerSocket(0)) {
      nobody = unused.getLocalPort(); // closed below: nothing listens there
    }
    // AUTH_MODE=none: every caller anonymous, every write still audited; its backends are not there.
    try (GatewayProcess gateway = GatewayProcess.start(new GatewayConfig(0, 0, List.of("127.0.0.1:" + nobody),
        List.of("127.0.0.1:" + nobody), Duration.ofSeconds(2), GatewayConfig.DEFAULT_MIN_FORWARD_BUDGET,
        GatewayConfig.DEFAULT_CIRCUIT_OPEN, Duration.ZERO, Duration.ofSeconds(1)))) {
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort()).usePlaintext().build();
      try {
        for (int i = 0; i < 5; i++) {
          PutProductInventoryRequest write = PutProductInventoryRequest.newBuilder()
              .setInventory(ProductInventory.newBuilder().setProductId("P-" + i).setWarehouseId("W1")).build();
          assertThat(catchThrowableOfType(StatusRuntimeException.class, () -> InventoryServiceGrpc.newBlockingStub(channel)
              .withDeadlineAfter(5, TimeUnit.SECONDS).putProductInventory(write))).as("answered, with an error").isNotNull();
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }

      assertThat(gateway.access().drainAudit(Duration.ofMillis(50))).as("the writer is held: the lines are still queued").isFalse();
      release.countDown();
      assertThat(gateway.access().drainAudit(Duration.ofSeconds(10))).isTrue();
      assertThat(written.stream().filter(line -> "audit".equals(line.get("event")))).hasSize(5)
          .allMatch(line -> "warehouse.inventory.v1.InventoryService/PutProductInventory".equals(line.get("method")));
    } finally {
      release.countDown();
      logger.detachAppender(slowLog);
      slowLog.stop();
    }
  }
}
