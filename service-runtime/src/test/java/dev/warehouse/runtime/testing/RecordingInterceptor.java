package dev.warehouse.runtime.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;

/** Records every DynamoDB request a client makes, as the SDK is about to send it. */
public final class RecordingInterceptor implements ExecutionInterceptor {

  private final List<SdkRequest> requests = new CopyOnWriteArrayList<>();

  @Override
  public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
    requests.add(context.request());
  }

  public List<SdkRequest> requests() {
    return List.copyOf(requests);
  }

  public void clear() {
    requests.clear();
  }
}
