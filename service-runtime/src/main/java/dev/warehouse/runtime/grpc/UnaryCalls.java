package dev.warehouse.runtime.grpc;

import io.grpc.Context;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Completes a unary call from an asynchronous result without parking a thread: the answer is sent
 * from whichever thread completes the future. Failures, including ones thrown while the call is
 * being set up, go through {@link GrpcErrors}.
 */
public final class UnaryCalls {

  private UnaryCalls() {}

  /**
   * Runs {@code call}, maps its result with {@code toProto} and answers {@code observer}.
   */
  public static <D, P> void reply(
      StreamObserver<P> observer, Supplier<? extends CompletionStage<D>> call, Function<? super D, P> toProto) {
    // The call's own Context, attached again where the answer is completed (often on the DynamoDB client's
    // thread): what is logged there, a failure's cause say, names the call (CallFields).
    Context context = Context.current();
    CompletionStage<D> result;
    try {
      result = call.get();
    } catch (RuntimeException e) {
      fail(observer, e);
      return;
    }
    result.whenComplete((value, failure) -> context.run(() -> complete(observer, value, failure, toProto)));
  }

  private static <D, P> void complete(StreamObserver<P> observer, D value, Throwable failure,
      Function<? super D, P> toProto) {
    if (failure != null) {
      fail(observer, failure);
      return;
    }
    if (isCancelled(observer)) {
      return;
    }
    P response;
    try {
      response = toProto.apply(value);
    } catch (RuntimeException e) {
      fail(observer, e);
      return;
    }
    observer.onNext(response);
    observer.onCompleted();
  }

  private static void fail(StreamObserver<?> observer, Throwable failure) {
    if (!isCancelled(observer)) {
      observer.onError(GrpcErrors.toStatusException(failure));
    }
  }

  private static boolean isCancelled(StreamObserver<?> observer) {
    return observer instanceof ServerCallStreamObserver<?> server && server.isCancelled();
  }
}
