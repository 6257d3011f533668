package dev.warehouse.testing;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.function.Supplier;

/** What a careful client does with an answer that asks it to call again. */
public final class Retries {

  /** The attempts in all before an ABORTED answer is the test's to see. */
  public static final int ABORTED_ATTEMPTS = 5;

  private Retries() {}

  /**
   * Calls {@code call}, and again after ABORTED, at most {@value #ABORTED_ATTEMPTS} times in all: for setup
   * calls that are safe to repeat (setting a quantity, say) on a table that injects TransactionConflicts, where
   * the service's own attempts can all meet one and it answers ABORTED with nothing written. Any other failure,
   * or the last ABORTED, is thrown.
   */
  public static <T> T afterAborted(Supplier<T> call) {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.ABORTED || attempt >= ABORTED_ATTEMPTS) {
          throw e;
        }
      }
    }
  }
}
