package dev.warehouse.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warehouse.inventory.v1.InventoryServiceGrpc;
import dev.warehouse.inventory.v1.ProductInventory;
import dev.warehouse.inventory.v1.PutProductInventoryRequest;
import dev.warehouse.runtime.testing.MotoServer;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every answered write keeps its audit line: writes stream through the gateway's jar while it is stopped with
 * SIGTERM, and once it has exited, its log holds an {@code event=audit ... status=OK} line for every write its
 * callers saw answered OK, the last ones included (the stop writes out the lines still queued).
 */
class AuditShutdownIT {

  private static final int WRITERS = 8;
  /** Answered writes before the SIGTERM: the stop then lands in the middle of the stream. */
  private static final int BEFORE_STOP = 200;

  @Test
  void sigtermMidLoad_leavesAnAuditLineForEveryAnsweredWrite() throws Exception {
    String run = UUID.randomUUID().toString().substring(0, 8);
    String table = "audit-stop-" + run;
    Set<String> answered = ConcurrentHashMap.newKeySet();
    CountDownLatch enough = new CountDownLatch(BEFORE_STOP);
    try (StackProcess inventory = StackProcess.service("audit-stop-inventory-" + run,
            "inventory-service/target/inventory-service.jar", StackProcess.freePort(), StackProcess.freePort(),
            Map.of("DYNAMODB_ENDPOINT", MotoServer.endpoint().toString(), "TABLE_NAME", table,
                "TABLE_AUTO_CREATE", "true")).startAndAwaitPort();
        StackProcess gateway = StackProcess.service("audit-stop-gateway-" + run, "gateway/target/gateway.jar",
            StackProcess.freePort(), StackProcess.freePort(), Map.of("AUTH_MODE", "none",
                "INVENTORY_ADDRESSES", "127.0.0.1:" + inventory.grpcPort,
                "ORDER_ADDRESSES", "127.0.0.1:" + StackProcess.freePort(),
                "SHUTDOWN_DRAIN_MS", "300", "SHUTDOWN_GRACE_SECONDS", "5")).startAndAwaitPort()) {
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", gateway.grpcPort).usePlaintext().build();
      ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
      try {
        for (int w = 0; w < WRITERS; w++) {
          int writer = w;
          writers.submit(() -> {
            // Until the gateway is gone: a few failures in a row once it has stopped listening.
            int failures = 0;
            for (int n = 0; failures < 3; n++) {
              String product = "AUD-" + writer + "-" + n;
              try {
                InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
                    .putProductInventory(PutProductInventoryRequest.newBuilder().setInventory(ProductInventory
                        .newBuilder().setProductId(product).setWarehouseId("W1").setQuantity(1)).build());
                answered.add(product);
                enough.countDown();
                failures = 0;
              } catch (StatusRuntimeException e) {
                failures++;
              }
            }
            return null;
          });
        }
        assertThat(enough.await(120, TimeUnit.SECONDS)).as("writes answered before the stop").isTrue();
        gateway.stop(); // SIGTERM, and waits for the process to exit
        writers.shutdown();
        assertThat(writers.awaitTermination(60, TimeUnit.SECONDS)).as("the writers saw the gateway go").isTrue();
      } finally {
        writers.shutdownNow();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }

      Set<String> audited = ConcurrentHashMap.newKeySet();
      Pattern line = Pattern.compile("event=audit .*method=warehouse\\.inventory\\.v1\\.InventoryService/PutProductInventory"
          + " .*product_id=(AUD-\\d+-\\d+) .*status=OK");
      List<String> log = Files.readAllLines(StackProcess.LOGS.resolve("audit-stop-gateway-" + run + ".log"));
      for (String entry : log) {
        Matcher matcher = line.matcher(entry);
        if (matcher.find()) {
          audited.add(matcher.group(1));
        }
      }
      assertThat(answered).hasSizeGreaterThanOrEqualTo(BEFORE_STOP);
      assertThat(log).as("the gateway stopped as SIGTERM stops it").anyMatch(l -> l.contains("event=stopped service=gateway"));
      assertThat(audited).as("an audit line for every write answered OK").containsAll(answered);
    }
  }
}
