package dev.warehouse.runtime.dynamo;

import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.threads.DaemonThreads;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.client.config.SdkAdvancedAsyncClientOption;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.async.AsyncExecuteRequest;
import software.amazon.awssdk.http.async.SdkAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.SdkEventLoopGroup;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClientBuilder;
import software.amazon.awssdk.utils.AttributeMap;

/** Builds the one asynchronous DynamoDB client of a process. */
public final class DynamoClients {

  private static final Logger log = LoggerFactory.getLogger(DynamoClients.class);

  /**
   * The SDK makes one attempt per call: {@link DynamoCalls} owns every retry, with budgets from the
   * caller's deadline, so retry layers never stack.
   */
  static final int SDK_MAX_ATTEMPTS = 1;

  /** Connections the client may hold to DynamoDB; requests beyond it queue without a thread. */
  public static final int MAX_CONNECTIONS = 128;

  /**
   * Period of a no-op on the timer thread. The executor wakes its thread whenever a new task becomes
   * the head of its queue, and with one call in flight at a time every call's timeouts did: the
   * previous call's had been cancelled, and the queue was empty. A no-op due sooner than any timeout
   * keeps the head, so scheduling a timeout wakes nothing, and the thread wakes twice a second instead
   * of once per call. A timeout shorter than this still becomes the head, and is still kept.
   * Declared before {@link #TIMEOUTS}, which reads it as the class initializes.
   */
  static final Duration TIMER_HEAD = Duration.ofMillis(500);

  /**
   * Where the SDK times out calls and attempts, and waits between retries: one thread for the process,
   * whose tasks only complete futures and start attempts, none of which blocks. The SDK's default is a
   * pool of five that keeps cancelled timeouts queued until they would have fired: every DynamoDB call
   * then woke a timer thread twice, long after it had ended, and those wake-ups cost the
   * inventory-service about 9 % of a core in the layer benchmark (docs/performance-log.md). Cancelled
   * here, a timeout leaves the queue at once.
   */
  private static final ScheduledExecutorService TIMEOUTS = timer("dynamodb-timeouts");

  private DynamoClients() {}

  /** A timer as {@link #TIMEOUTS} is, on one daemon thread named {@code threadName}. */
  static ScheduledExecutorService timer(String threadName) {
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, DaemonThreads.named(threadName));
    timer.setRemoveOnCancelPolicy(true);
    timer.scheduleAtFixedRate(() -> { }, TIMER_HEAD.toMillis(), TIMER_HEAD.toMillis(), TimeUnit.MILLISECONDS);
    return timer;
  }

  /**
   * The client of a process: one attempt per call (retries are {@link DynamoCalls}'), each bounded by
   * the call timeout unless the request sets its own.
   */
  public static DynamoDbAsyncClient create(StoreServiceConfig config, List<ExecutionInterceptor> interceptors) {
    Duration callTimeout = config.dynamoCallTimeout();
    DynamoDbAsyncClientBuilder builder = DynamoDbAsyncClient.builder()
        .region(Region.of(config.region()))
        .credentialsProvider(credentials(config))
        .httpClientBuilder(new OwnLoops(NettyNioAsyncHttpClient.builder()
            .maxConcurrency(MAX_CONNECTIONS)
            .connectionTimeout(Duration.ofSeconds(2)), config.dynamoIoThreads()))
        // The SDK completes futures on a thread pool of its own, in case callers block in callbacks. Ours
        // never do (the request path is non-blocking end to end), so they run where the response arrives:
        // one thread hand-off less per DynamoDB call.
        .asyncConfiguration(a -> a.advancedOption(SdkAdvancedAsyncClientOption.FUTURE_COMPLETION_EXECUTOR, Runnable::run))
        .overrideConfiguration(o -> o
            .scheduledExecutorService(TIMEOUTS)
            .apiCallTimeout(callTimeout)
            .retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(SDK_MAX_ATTEMPTS).build())
            .executionInterceptors(interceptors));
    config.dynamoEndpoint().ifPresent(builder::endpointOverride);
    return builder.build();
  }

  /**
   * The SDK's Netty client on I/O threads it does not own, closed with it, at once. The SDK's default is
   * two I/O threads per core, and its client passes each call between them (connection pool on one,
   * connection on another), waking threads on every DynamoDB call; one thread wakes far fewer and cost
   * the services less CPU in the layer benchmark (docs/performance-log.md). One thread carries the load
   * of a small instance; raise DYNAMODB_IO_THREADS when TLS to DynamoDB fills it.
   *
   * <p>Threads the SDK owns stop only after Netty's quiet period of two seconds, so every stop of a
   * service (and every test's stop) waited two seconds per client. When the client closes, its
   * connections are closed and no task can still arrive, so these stop without a quiet period.
   */
  private record OwnLoops(NettyNioAsyncHttpClient.Builder netty, int threads) implements SdkAsyncHttpClient.Builder<OwnLoops> {

    @Override
    public SdkAsyncHttpClient buildWithDefaults(AttributeMap defaults) {
      SdkEventLoopGroup loops = SdkEventLoopGroup.builder().numberOfThreads(threads).build();
      SdkAsyncHttpClient client;
      try {
        client = netty.eventLoopGroup(loops).buildWithDefaults(defaults);
      } catch (RuntimeException | Error e) {
        loops.eventLoopGroup().shutdownGracefully(0, 0, TimeUnit.SECONDS);
        throw e;
      }
      return new SdkAsyncHttpClient() {
        @Override
        public CompletableFuture<Void> execute(AsyncExecuteRequest request) {
          return client.execute(request);
        }

        @Override
        public String clientName() {
          return client.clientName();
        }

        @Override
        public void close() {
          client.close();
          loops.eventLoopGroup().shutdownGracefully(0, LOOPS_STOP.toSeconds(), TimeUnit.SECONDS)
              .awaitUninterruptibly(LOOPS_STOP.plusSeconds(1).toMillis());
        }
      };
    }
  }

  /** The longest a closing client waits for its I/O threads to end. */
  private static final Duration LOOPS_STOP = Duration.ofSeconds(5);

  /**
   * Real AWS uses the default chain. With an endpoint override (an emulator such as moto), keys from
   * the environment are used when present, otherwise placeholder keys, which emulators accept; this
   * skips the default chain's slow instance-metadata probe on machines outside AWS.
   */
  private static AwsCredentialsProvider credentials(StoreServiceConfig config) {
    if (config.dynamoEndpoint().isEmpty()) {
      // Resolved here, before the server serves, then refreshed ahead of expiry on a background thread:
      // handlers run on the gRPC I/O threads and must never wait for the chain's lookups (profile files,
      // the instance or container metadata endpoint).
      DefaultCredentialsProvider chain = DefaultCredentialsProvider.builder().asyncCredentialUpdateEnabled(true).build();
      try {
        chain.resolveCredentials();
      } catch (RuntimeException e) {
        Events.warn(log, "aws_credentials_unresolved").addKeyValue("error", e.getClass().getSimpleName())
            .addKeyValue("detail", "the first DynamoDB calls will resolve them, and wait for it").log();
      }
      return chain;
    }
    try {
      EnvironmentVariableCredentialsProvider env = EnvironmentVariableCredentialsProvider.create();
      env.resolveCredentials();
      return env;
    } catch (RuntimeException noKeysInEnvironment) {
      return StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local"));
    }
  }
}
