package dev.warehouse.runtime.service;

import dev.warehouse.runtime.config.StoreServiceConfig;
import dev.warehouse.runtime.dynamo.DynamoStore;
import dev.warehouse.runtime.hotkeys.HotKeys;
import dev.warehouse.runtime.paging.PageTokenCodec;
import dev.warehouse.runtime.process.Resources;
import dev.warehouse.runtime.tls.TransportSecurity;
import dev.warehouse.runtime.trace.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * What a table service's wiring is built from: the process's shared objects ({@code ProcessContext}) and the
 * store the DynamoDB plug-in adds, handed over by constructor.
 *
 * @param store     the data-access layer over the single table (retries, tokens, error translation)
 * @param scheduler timers for retry backoff and periodic work; never blocked on
 * @param transport the process's TLS identity and CA, for its own client channels to other services
 * @param resources what a service's wiring opened besides (client channels, say): closed after the server stops
 * @param hotKeys   the hottest partition keys of the process's own requests, per access pattern
 * @param tracing   the process's spans: a service's client channels add {@link Tracing#clientInterceptor}
 */
public record StoreContext(
    StoreServiceConfig config,
    DynamoDbAsyncClient dynamo,
    DynamoStore store,
    MeterRegistry meterRegistry,
    PageTokenCodec pageTokens,
    Clock clock,
    ScheduledExecutorService scheduler,
    TransportSecurity transport,
    Resources resources,
    HotKeys hotKeys,
    Tracing tracing) {}
