package dev.warehouse.runtime.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;

/** Records every DynamoDB request a client makes, as the SDK is about to send it, and counts those that ended. */
public final class RecordingInterceptor implements ExecutionInterceptor {

  private final List<SdkRequest> requests = new CopyOnWriteArrayList<>();
  private final AtomicInteger ended = new AtomicInteger();

  @Override
  public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
    requests.add(context.request());
  }

  @Override
  public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
    ended.incrementAndGet();
  }

  @Override
  public void onExecutionFailure(Context.FailedExecution context, ExecutionAttributes attributes) {
    ended.incrementAndGet();
  }

  /** Requests that ended, answered or failed (timed out, cancelled); the rest are still in flight. */
  public int ended() {
    return ended.get();
  }

  public List<SdkRequest> requests() {
    return List.copyOf(requests);
  }

  public void clear() {
    requests.clear();
    ended.set(0);
  }
}
