package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.trace.Tracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import java.util.List;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;

/**
 * A CLIENT span for every DynamoDB request (one per attempt: the SDK's own retries are off), a child of the call the
 * request serves ({@link Tracing#current}: the data-access layer makes each attempt in its call's gRPC context),
 * with the route it serves ({@code warehouse.route}, the retrieval map's id) and the capacity it consumed.
 */
public final class DynamoTracing implements ExecutionInterceptor {

  private static final ExecutionAttribute<Span> SPAN = new ExecutionAttribute<>("TraceSpan");
  static final AttributeKey<String> ROUTE = AttributeKey.stringKey("warehouse.route");
  static final AttributeKey<Double> CAPACITY = AttributeKey.doubleKey("aws.dynamodb.consumed_capacity_units");
  private static final AttributeKey<List<String>> TABLES = AttributeKey.stringArrayKey("aws.dynamodb.table_names");

  private final Tracer tracer;
  private final List<String> table;

  public DynamoTracing(Tracer tracer, String tableName) {
    this.tracer = tracer;
    this.table = List.of(tableName);
  }

  @Override
  public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
    String operation = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
    Span span = tracer.spanBuilder("DynamoDB." + operation).setParent(Tracing.current()).setSpanKind(SpanKind.CLIENT)
        .setAttribute("db.system", "dynamodb")
        .setAttribute("rpc.system", "aws-api")
        .setAttribute("rpc.service", "DynamoDB")
        .setAttribute("rpc.method", operation)
        .setAttribute(TABLES, table)
        .startSpan();
    attributes.putAttribute(SPAN, span);
  }

  @Override
  public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
    Span span = attributes.getAttribute(SPAN);
    if (span == null) {
      return;
    }
    span.setAttribute(CAPACITY, DynamoMetrics.totalUnits(DynamoMetrics.consumed(context.response())));
    end(span, attributes);
  }

  @Override
  public void onExecutionFailure(Context.FailedExecution context, ExecutionAttributes attributes) {
    Span span = attributes.getAttribute(SPAN);
    if (span == null) {
      return;
    }
    // The bounded category the metrics use (throttled, condition_failed, ...); a failed condition is an answer, but
    // the request did not do what it asked.
    String outcome = DynamoMetrics.outcome(context.exception());
    span.setAttribute("warehouse.outcome", outcome);
    span.setStatus(StatusCode.ERROR, outcome);
    end(span, attributes);
  }

  private static void end(Span span, ExecutionAttributes attributes) {
    String route = attributes.getAttribute(DynamoMetrics.ACCESS_PATTERN);
    if (route != null) {
      span.setAttribute(ROUTE, route);
    }
    span.end();
  }
}
