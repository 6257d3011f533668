package dev.warehouse.runtime.log;

import dev.warehouse.runtime.trace.Tracing;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * The method, trace id, request id and caller of the call being served: fields of the log lines written while serving it
 * ({@link Events}).
 *
 * <p>They travel in the call's gRPC {@link Context}, not in SLF4J's MDC. Handlers run on the transport's threads
 * (directExecutor), where many calls take turns, and a call's answer is often completed on another thread (the
 * DynamoDB client's, a peer call's): an MDC entry belongs to a thread, so one call's id would stay behind and
 * name the next call's lines unless every hand-off set and cleared it. gRPC attaches a call's Context exactly
 * while that call's callbacks run, and {@code UnaryCalls} attaches it again where it completes the answer, so a
 * line reads the fields of its own call or of none.
 *
 * <p>One holder per call, put in by {@link #interceptor} (the outermost interceptor: {@code GrpcServer} adds
 * it), and filled in by whoever learns a value, as the gateway's audit trail fills in its entry: the interceptor
 * that establishes the caller ({@code PeerIdentityInterceptor}'s peer identity in a service, the gateway's
 * {@code CallerAuthentication}), and the handler that reads the request's {@code request_id}.
 */
public final class CallFields {

  private static final Context.Key<CallFields> KEY = Context.key("warehouse.call-fields");

  private final String method;
  private volatile String requestId;
  private volatile String caller;

  private CallFields(String method) {
    this.method = method;
  }

  /** Gives every call its own fields. A holder and a Context per call: nothing beside a call's own allocations. */
  public static ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        return Contexts.interceptCall(
            Context.current().withValue(KEY, new CallFields(call.getMethodDescriptor().getFullMethodName())), call,
            headers, next);
      }
    };
  }

  /** Names the caller of the call being served, if one is (its peer identity, or the gateway's authenticated caller). */
  public static void caller(String identity) {
    CallFields fields = KEY.get();
    if (fields != null) {
      fields.caller = identity;
    }
  }

  /** Names the request id of the call being served, if one is: the handler's, once it read a valid one. */
  public static void requestId(String id) {
    CallFields fields = KEY.get();
    if (fields != null) {
      fields.requestId = id;
    }
  }

  /** Adds the current call's fields that are known to {@code line}; none outside a call. */
  static void addTo(LoggingEventBuilder line) {
    CallFields fields = KEY.get();
    if (fields == null) {
      return;
    }
    line.addKeyValue("method", fields.method);
    // The one id that names a call in every process it reaches: its trace's ({@code Tracing}), set or not.
    String trace = Tracing.currentTraceId();
    if (trace != null) {
      line.addKeyValue("trace_id", trace);
    }
    String id = fields.requestId;
    if (id != null) {
      line.addKeyValue("request_id", id);
    }
    String who = fields.caller;
    if (who != null) {
      line.addKeyValue("caller", who);
    }
  }
}
