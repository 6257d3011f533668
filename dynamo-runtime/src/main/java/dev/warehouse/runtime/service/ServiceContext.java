package dev.warehouse.runtime.service;

import dev.warehouse.runtime.config.ServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.log.Events;
import dev.warehouse.runtime.paging.PageTokenCodec;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The heavy objects of a process, built once and handed to a service's wiring by constructor.
 *
 * @param store     the data-access layer over the single table (retries, tokens, error translation)
 * @param scheduler timers for retry backoff and periodic work; never blocked on
 * @param transport the process's TLS identity and CA, for its own client channels to other services
 * @param resources what a service's wiring opened besides (client channels, say): closed after the server stops
 */
public record ServiceContext(
    ServiceConfig config,
    DynamoDbAsyncClient dynamo,
    DynamoStore store,
    MeterRegistry meterRegistry,
    PageTokenCodec pageTokens,
    Clock clock,
    ScheduledExecutorService scheduler,
    dev.warehouse.runtime.tls.TransportSecurity transport,
    Resources resources) {

  /** What a service's wiring opens and the process closes when it stops, last opened first closed. */
  public static final class Resources {
    private final java.util.Deque<AutoCloseable> opened = new java.util.concurrent.ConcurrentLinkedDeque<>();

    /** Closes {@code resource} when the process stops; returns it. */
    public <T extends AutoCloseable> T closeOnStop(T resource) {
      opened.push(resource);
      return resource;
    }

    void closeAll() {
      for (AutoCloseable resource = opened.poll(); resource != null; resource = opened.poll()) {
        try {
          resource.close();
        } catch (Exception e) {
          Events.warn(org.slf4j.LoggerFactory.getLogger(ServiceContext.class), "close_failed")
              .addKeyValue("resource", String.valueOf(resource)).setCause(e).log();
        }
      }
    }
  }
}
