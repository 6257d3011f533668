package dev.warehouse.runtime.service;

import dev.warehouse.runtime.admin.AdminGrpcEndpoint;
import dev.warehouse.runtime.admission.Admission;
import dev.warehouse.runtime.admission.RouteLimiter;
import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoCalls;
import dev.warehouse.runtime.dynamo.DynamoClients;
import dev.warehouse.runtime.dynamo.DynamoMetrics;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.dynamo.DynamoTracing;
import dev.warehouse.runtime.dynamo.TableSetup;
import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.process.ProcessContext;
import dev.warehouse.runtime.process.ProcessPlugin;
import dev.warehouse.runtime.process.ServerProcess;
import dev.warehouse.runtime.routing.RouteTable;
import dev.warehouse.runtime.scope.CallerScopeCheck;
import dev.warehouse.runtime.tls.TlsMode;
import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * DynamoDB, plugged into the one process assembly ({@link ServerProcess}) by the services that keep their data in
 * the table, and not by the gateway: the client, the table's creation where asked, the store, each method's
 * concurrency limit, the caller scope check, and {@code warehouse.admin.v1.AdminService} (the hot keys the
 * process's DynamoDB requests went to, counted by {@link DynamoMetrics} into {@link HotKeys}).
 */
public final class DynamoPlugin implements ProcessPlugin {

  private static final Logger log = LoggerFactory.getLogger(DynamoPlugin.class);

  private final StoreServiceConfig config;
  private final Function<StoreContext, List<BindableService>> services;
  private final List<ExecutionInterceptor> sdkInterceptors;
  private HotKeys hotKeys;
  private Future<DynamoDbAsyncClient> dynamoBuilt;

  private DynamoPlugin(StoreServiceConfig config, Function<StoreContext, List<BindableService>> services,
      List<ExecutionInterceptor> sdkInterceptors) {
    this.config = config;
    this.services = services;
    this.sdkInterceptors = List.copyOf(sdkInterceptors);
  }

  /**
   * Starts a service over the table.
   *
   * @param services        builds the gRPC services from the process's shared objects
   * @param sdkInterceptors extra DynamoDB request interceptors (tests record requests with one)
   */
  public static ServerProcess start(StoreServiceConfig config, Function<StoreContext, List<BindableService>> services,
      List<ExecutionInterceptor> sdkInterceptors) throws IOException {
    return ServerProcess.start(config.process(), config.fields(), false,
        new DynamoPlugin(config, services, sdkInterceptors));
  }

  /** The client's classes, its event loop and the credential lookup, built while the certificates are read. */
  @Override
  public void prepare(Early early) {
    hotKeys = new HotKeys(early.clock(), early.registry(), config.hotKeyLogShare());
    List<ExecutionInterceptor> interceptors = new ArrayList<>(sdkInterceptors);
    interceptors.add(new DynamoMetrics(early.registry(), hotKeys));
    if (early.tracing().recording()) {
      interceptors.add(new DynamoTracing(early.tracing().tracer(), config.tableName()));
    }
    dynamoBuilt = early.aside().submit(() -> DynamoClients.create(config, interceptors));
  }

  @Override
  public Plugged plug(ProcessContext process) throws IOException {
    PageTokenCodec pageTokens = config.pageTokenKey()
        .map(key -> new PageTokenCodec(key, config.acceptedPageTokenKeys())).orElseGet(() -> {
          Events.warn(log, "page_token_key_random")
              .addKeyValue("detail", "set PAGE_TOKEN_KEY so instances accept each other's page tokens").log();
          return PageTokenCodec.withRandomKey();
        });
    DynamoDbAsyncClient dynamo = process.resources().closeOnStop(built(dynamoBuilt));
    dynamoBuilt = null; // the resources close it from here on
    if (config.createTable()) {
      TableSetup.ensureTable(dynamo, config.tableName(), Duration.ofMinutes(2));
    }
    DynamoStore store = new DynamoStore(dynamo, config.tableName(),
        new DynamoCalls(process.scheduler(), process.registry(), config.dynamoCallTimeout()), pageTokens,
        process.registry());
    StoreContext context = new StoreContext(config, dynamo, store, process.registry(), pageTokens, process.clock(),
        process.scheduler(), process.transport(), process.resources(), hotKeys, process.tracing());
    List<BindableService> served = new ArrayList<>(services.apply(context));
    List<ServiceDescriptor> descriptors = served.stream().map(service -> service.bindService().getServiceDescriptor())
        .toList();
    // Each of the service's own methods has its concurrency limit, a slot taken at a call's first store call.
    List<String> methods = descriptors.stream().flatMap(service -> service.getMethods().stream())
        .map(MethodDescriptor::getFullMethodName).toList();
    RouteLimiter limiter = new RouteLimiter(config.serviceName(),
        methods.stream().map(MethodDescriptor::extractBareMethodName).toList(), config.admission(), process.registry(),
        process.scheduler());
    CallerScopeCheck scopes = new CallerScopeCheck(RouteTable.declared(descriptors),
        config.tls().serverMode() == TlsMode.MTLS ? Optional.of(config.tls().trustedPeers()) : Optional.empty());
    served.add(new AdminGrpcEndpoint(config.serviceName(), hotKeys));
    // The hot-key log check: microseconds every slot, on the timer thread (which it never blocks for long).
    process.scheduler().scheduleAtFixedRate(this::logHotKeys, HotKeys.SLOT.toMillis(), HotKeys.SLOT.toMillis(),
        TimeUnit.MILLISECONDS);
    return Plugged.of(served, List.of(scopes, new Admission(limiter, Set.copyOf(methods))));
  }

  /** A start that failed before the client was handed over closes it, whenever it is built. */
  @Override
  public void abandon() {
    if (dynamoBuilt == null) {
      return;
    }
    try {
      dynamoBuilt.get(1, TimeUnit.MINUTES).close();
    } catch (Exception | Error ignored) {
      // it never got built, or its close failed: the process is failing its start either way
    }
  }

  /** The client built on the start-up thread; its failure is this thread's. */
  private static DynamoDbAsyncClient built(Future<DynamoDbAsyncClient> client) {
    try {
      return client.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the DynamoDB client was built", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  private void logHotKeys() {
    try {
      hotKeys.logHotKeys();
    } catch (RuntimeException e) { // a periodic task that throws is never run again
      Events.warn(log, "hot_key_check_failed").setCause(e).log();
    }
  }
}
