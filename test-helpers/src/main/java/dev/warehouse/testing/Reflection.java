package dev.warehouse.testing;

import io.grpc.Channel;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Asks a server's reflection service (v1) one question, as grpcurl does. */
public final class Reflection {

  private Reflection() {}

  public static ServerReflectionResponse ask(Channel channel, ServerReflectionRequest request) throws Exception {
    CompletableFuture<List<ServerReflectionResponse>> done = new CompletableFuture<>();
    List<ServerReflectionResponse> responses = new ArrayList<>();
    StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(channel)
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .serverReflectionInfo(new StreamObserver<>() {
          @Override
          public void onNext(ServerReflectionResponse value) {
            responses.add(value);
          }

          @Override
          public void onError(Throwable t) {
            done.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
            done.complete(responses);
          }
        });
    requests.onNext(request);
    requests.onCompleted();
    List<ServerReflectionResponse> all = done.get(10, TimeUnit.SECONDS);
    if (all.size() != 1) {
      throw new AssertionError("expected one reflection answer, got " + all.size());
    }
    return all.get(0);
  }
}
