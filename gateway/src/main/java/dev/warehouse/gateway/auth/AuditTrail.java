package dev.warehouse.gateway.auth;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.rpc.ErrorInfo;
import dev.warehouse.logging.Logging;
import dev.warehouse.runtime.discovery.BackendServiceConfig;
import dev.warehouse.runtime.grpc.GrpcErrors;
import dev.warehouse.runtime.threads.DaemonThreads;
import dev.warehouse.runtime.trace.Tracing;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * The audit trail: one {@code audit} event per write call through the gateway (a method its
 * contract does not declare {@code NO_SIDE_EFFECTS}), when the call ends, whatever its end: answered,
 * failed, refused by authentication, authorization or its caller's quota, or cancelled; and one per read
 * refused for its caller's quota ({@link #refused}). It names the caller, its roles and
 * how it proved itself, the peer address, the method, the ids the request carries ({@link #ID_FIELDS},
 * at the top of the request or in the record it carries), the status and its {@code ErrorInfo} reason,
 * and the duration, each a field of the line:
 *
 * <pre>
 * {"ts":"…","level":"INFO","logger":"dev.warehouse.gateway.auth.AuditTrail","thread":"audit-trail","event":"audit","msg":"audit","caller":"alice","auth":"jwt","roles":"picker","peer":"10.0.0.7:51234","method":"warehouse.inventory.v1.InventoryService/AdjustStock","product_id":"P100","request_id":"pick-0001","status":"OK","duration_ms":4.2}
 * </pre>
 *
 * It never logs a credential: it sees the request's ids and the caller {@link CallerAuthentication}
 * established, never the headers. A refused call's request was never read, so its line has no ids.
 * Values come from callers: the log's encoder escapes every one, and long ones are cut here, so no request
 * can forge a field or a line, or make one unbounded.
 *
 * <p>A stream of its own, as before: its own logger ({@code dev.warehouse.gateway.auth.AuditTrail}, which a
 * pipeline routes apart by the {@code logger} field, and which {@code LOG_LEVEL} never turns below INFO), its own
 * writer thread, its own drain at shutdown; its lines carry only its own fields, not those of the call being
 * served ({@code CallFields}).
 *
 * <p>It runs outermost, so that it sees refusals; {@link CallerAuthentication}, which runs inside it,
 * tells it the caller through {@link #identify}.
 */
public final class AuditTrail implements ServerInterceptor {

  /** The fields named in a line, when the request has them. */
  public static final List<String> ID_FIELDS = List.of("request_id", "order_id", "product_id", "customer_id");

  static final int MAX_VALUE_LENGTH = 128;

  /** At INFO whatever LOG_LEVEL says: a write's record is not a diagnostic to turn down. */
  private static final Logger log = Logging.alwaysWritten(AuditTrail.class);
  private static final Context.Key<Entry> ENTRY = Context.key("warehouse.audit-entry");

  /**
   * Writes the lines off the event loop: reading the ids from the request's bytes and a log handler's
   * I/O are not the forwarding path's to wait for. When the queue is full the call's own thread writes
   * its line: slower, never lost.
   */
  private final ThreadPoolExecutor writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS,
      new ArrayBlockingQueue<>(10_000), DaemonThreads.named("audit-trail"), new ThreadPoolExecutor.CallerRunsPolicy());

  /**
   * Waits until every line queued so far is written. A call's line is queued before its status is sent,
   * so after this a caller that has its answer also has its line: what tests that read the lines need.
   */
  void awaitWritten() throws InterruptedException {
    if (!drain(Duration.ofSeconds(10))) {
      throw new IllegalStateException("the audit trail's writer did not drain");
    }
  }

  /**
   * Writes out every line queued so far, waiting up to {@code timeout}: the gateway's stop calls it once its
   * calls have ended, since the writer's thread would die with the JVM and take the lines still queued with it.
   * A line written is out: the console appender flushes each one. Returns whether everything was written in time.
   */
  boolean drain(Duration timeout) throws InterruptedException {
    try {
      writer.submit(() -> {}).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return false;
    }
  }

  /** Ends the writer's thread once the lines queued so far are written; call after {@link #drain}. */
  void close() {
    writer.shutdown();
  }

  /** The request type of each audited method, by full name. */
  private final Map<String, Descriptor> writes;
  /** Who calls when nobody authenticates the call (AUTH_MODE=none); null when someone does. */
  private final Caller unauthenticated;

  private AuditTrail(Map<String, Descriptor> writes, Caller unauthenticated) {
    this.writes = Map.copyOf(writes);
    this.unauthenticated = unauthenticated;
  }

  /** Audits the writes of {@code services}, whose callers {@link CallerAuthentication} establishes. */
  public static AuditTrail of(Collection<ServiceDescriptor> services) {
    return of(services, null);
  }

  /**
   * Audits the writes of {@code services}; with {@code unauthenticated}, every caller is that one
   * (AUTH_MODE=none, where no interceptor establishes callers).
   */
  public static AuditTrail of(Collection<ServiceDescriptor> services, Caller unauthenticated) {
    Map<String, Descriptor> writes = new HashMap<>();
    for (ServiceDescriptor service : services) {
      for (MethodDescriptor method : BackendServiceConfig.writeMethods(service)) {
        writes.put(service.getFullName() + "/" + method.getName(), method.getInputType());
      }
    }
    return new AuditTrail(writes, unauthenticated);
  }

  /** Tells the audit entry of the current call, if it has one, who the caller is. */
  static void identify(Caller caller) {
    Entry entry = ENTRY.get();
    if (entry != null) {
      entry.caller = caller;
    }
  }

  /**
   * Records a call refused for a reason audited whatever its method ({@link CallerQuotas}: its caller's quota):
   * a read's refusal gets a line of its own, and a write's has its line already, from the call's own entry.
   */
  void refused(ServerCall<?, ?> call, Caller caller, Status status, Metadata trailers) {
    String method = call.getMethodDescriptor().getFullMethodName();
    if (writes.containsKey(method)) {
      return;
    }
    Entry entry = new Entry(writer, method, null, call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
    entry.caller = caller;
    entry.end(status, trailers);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    Descriptor requestType = writes.get(method);
    if (requestType == null) {
      return next.startCall(call, headers);
    }
    Entry entry = new Entry(writer, method, requestType, call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
    entry.caller = unauthenticated;
    ServerCall<Q, R> watched = new SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        entry.end(status, trailers);
        super.close(status, trailers);
      }
    };
    ServerCall.Listener<Q> listener =
        Contexts.interceptCall(Context.current().withValue(ENTRY, entry), watched, headers, next);
    return new SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onMessage(Q message) {
        entry.request = message;
        super.onMessage(message);
      }

      @Override
      public void onCancel() {
        entry.end(Status.CANCELLED, null);
        super.onCancel();
      }
    };
  }

  /** One audited call, from its start to its one line. */
  private static final class Entry {
    final Executor writer;
    final String method;
    final Descriptor requestType;
    final SocketAddress peer;
    /** The call's trace, which names it in every process's lines (null only outside a traced call). */
    final String traceId = Tracing.currentTraceId();
    final long started = System.nanoTime();
    final AtomicBoolean ended = new AtomicBoolean();
    volatile Caller caller;
    volatile Object request;

    Entry(Executor writer, String method, Descriptor requestType, SocketAddress peer) {
      this.writer = writer;
      this.method = method;
      this.requestType = requestType;
      this.peer = peer;
    }

    void end(Status status, Metadata trailers) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      double durationMs = (System.nanoTime() - started) / (double) TimeUnit.MILLISECONDS.toNanos(1);
      writer.execute(() -> write(status, trailers, durationMs));
    }

    private void write(Status status, Metadata trailers, double durationMs) {
      // Not Events.info: this line's caller and ids are the entry's, and it adds no call's fields of its own
      // (the call's thread writes it when the queue is full).
      LoggingEventBuilder line = log.atInfo().setMessage("audit").addKeyValue("event", "audit");
      Caller who = caller;
      field(line, "caller", who == null ? "-" : who.identity());
      field(line, "auth", who == null ? "-" : who.via());
      field(line, "roles", who == null || who.roles().isEmpty() ? "-"
          : String.join(",", who.roles().stream().sorted().toList()));
      field(line, "peer", peer instanceof InetSocketAddress address && address.getAddress() != null
          ? address.getAddress().getHostAddress() + ":" + address.getPort() : "-");
      field(line, "method", method);
      if (traceId != null) {
        field(line, "trace_id", traceId);
      }
      ids(request).forEach((name, value) -> field(line, name, value));
      field(line, "status", status.getCode().name());
      ErrorInfo error = GrpcErrors.errorInfo(status, trailers).orElse(null);
      if (error != null) {
        field(line, "reason", error.getReason());
        if (error.containsMetadata("limit")) {
          field(line, "limit", error.getMetadataOrThrow("limit")); // the quota limit that refused the call
        }
        if (error.containsMetadata("scope")) {
          field(line, "scope", error.getMetadataOrThrow("scope")); // the scope that refused the call
        }
      }
      line.addKeyValue("duration_ms", Math.round(durationMs * 10) / 10.0).log();
    }

    private Map<String, String> ids(Object message) {
      Message request;
      if (message instanceof Message parsed) {
        request = parsed;
      } else if (message instanceof byte[] bytes) {
        try {
          request = DynamicMessage.parseFrom(requestType, bytes);
        } catch (InvalidProtocolBufferException unreadable) {
          return Map.of(); // the backend will say INVALID_ARGUMENT, or not understand it either
        }
      } else {
        return Map.of();
      }
      Map<String, String> ids = new LinkedHashMap<>();
      for (String name : ID_FIELDS) {
        String value = find(request, name);
        if (value != null) {
          ids.put(name, value);
        }
      }
      return ids;
    }

    /** The field at the top of the request, or in a record it carries ({@code PutProductInventoryRequest.inventory}). */
    private static String find(Message request, String name) {
      String top = stringField(request, name);
      if (top != null) {
        return top;
      }
      for (FieldDescriptor field : request.getDescriptorForType().getFields()) {
        if (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE && !field.isRepeated() && request.hasField(field)) {
          String nested = stringField((Message) request.getField(field), name);
          if (nested != null) {
            return nested;
          }
        }
      }
      return null;
    }

    private static String stringField(Message message, String name) {
      FieldDescriptor field = message.getDescriptorForType().findFieldByName(name);
      if (field == null || field.isRepeated() || field.getJavaType() != FieldDescriptor.JavaType.STRING) {
        return null;
      }
      String value = (String) message.getField(field);
      return value.isEmpty() ? null : value;
    }
  }

  /** Adds {@code name}, its value cut at {@link #MAX_VALUE_LENGTH} characters (and "..." then): values come from callers. */
  static void field(LoggingEventBuilder line, String name, String value) {
    line.addKeyValue(name, value.length() > MAX_VALUE_LENGTH ? value.substring(0, MAX_VALUE_LENGTH) + "..." : value);
  }
}
