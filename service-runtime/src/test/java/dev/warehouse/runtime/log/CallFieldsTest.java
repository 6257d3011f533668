package dev.warehouse.runtime.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.grpc.UnaryCalls;
import dev.warehouse.testing.LogRecords;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class CallFieldsTest {

  /** Where the handler's answer completes: not the call's thread, as with the DynamoDB client. */
  private final ExecutorService elsewhere = Executors.newSingleThreadExecutor();
  private Server server;
  private ManagedChannel channel;

  @AfterEach
  void stop() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    elsewhere.shutdownNow();
  }

  /** A unary handler that names its call's request id and caller, then fails on another thread. */
  private void serve(String name) throws Exception {
    HealthGrpc.HealthImplBase failing = new HealthGrpc.HealthImplBase() {
      @Override
      public void check(HealthCheckRequest request, StreamObserver<HealthCheckResponse> observer) {
        UnaryCalls.reply(observer, () -> {
          CallFields.requestId(request.getService());
          CallFields.caller("spiffe://warehouse.local/gateway");
          return CompletableFuture.supplyAsync(() -> {
            throw new IllegalStateException("the store said \"no\"");
          }, elsewhere);
        }, ignored -> HealthCheckResponse.getDefaultInstance());
      }
    };
    server = InProcessServerBuilder.forName(name).directExecutor()
        .addService(ServerInterceptors.intercept(failing, CallFields.interceptor())).build().start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  private void call(String requestId) {
    StatusRuntimeException failure = catchThrowableOfType(StatusRuntimeException.class, () -> HealthGrpc
        .newBlockingStub(channel).check(HealthCheckRequest.newBuilder().setService(requestId).build()));
    assertThat(failure.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
  }

  @Test
  void aLineWrittenWhereTheAnswerCompletes_namesItsOwnCall_andNoLineOutsideACallDoes() throws Exception {
    serve("call-fields");
    try (LogRecords log = new LogRecords(GrpcErrors.class)) {
      call("r-1");
      call("r-2");
      List<LogRecords.Logged> failed = log.await(2);
      assertThat(failed).extracting(line -> line.field("request_id")).containsExactly("r-1", "r-2");
      assertThat(failed).allSatisfy(line -> assertThat(line.fields()).containsEntry("event", "call_failed")
          .containsEntry("reason", "INTERNAL").containsEntry("caller", "spiffe://warehouse.local/gateway"));
      assertThat(failed.get(0).error()).isInstanceOf(IllegalStateException.class);

      // The same thread once the call is over, and this one: no call's fields stay behind.
      log.clear();
      elsewhere.submit(() -> Events.info(LoggerFactory.getLogger(GrpcErrors.class), "after").log()).get();
      Events.info(LoggerFactory.getLogger(GrpcErrors.class), "outside").log();
      assertThat(log.events()).extracting(LogRecords.Logged::fields)
          .allSatisfy(fields -> assertThat(fields).doesNotContainKeys("request_id", "caller"))
          .extracting(fields -> fields.get("event")).containsExactly("after", "outside");
    }
  }

  @Test
  void outsideACall_settingAFieldDoesNothing() {
    CallFields.requestId("r-nobody");
    CallFields.caller("nobody");
    try (LogRecords log = new LogRecords(CallFieldsTest.class)) {
      Events.warn(LoggerFactory.getLogger(CallFieldsTest.class), "alone").addKeyValue("n", 1).log();
      assertThat(log.events()).singleElement().extracting(LogRecords.Logged::fields)
          .isEqualTo(java.util.Map.of("event", "alone", "n", 1));
    }
  }
}
