package dev.warehouse.bench.load;

import dev.warehouse.runtime.error.Failures;
import io.grpc.Status;
import software.amazon.awssdk.core.exception.SdkException;

/** The bounded name of a failure, for error counts: a gRPC status code, or the SDK exception's class. */
public final class Outcome {

  private Outcome() {}

  public static String of(Throwable failure) {
    Throwable t = Failures.cause(failure);
    Status status = Status.fromThrowable(t);
    if (status.getCode() != Status.Code.UNKNOWN || !(t instanceof SdkException)) {
      return status.getCode().name();
    }
    return t.getClass().getSimpleName();
  }
}
